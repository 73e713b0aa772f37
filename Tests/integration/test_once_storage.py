"""syncd(8) GUARANTEES 8 and startup recovery: disk faults keep the old copy; damaged own files are moved aside."""
import json
import os
import random
import sqlite3
import subprocess
import time

import pytest

from conftest import BIN, POSTS, fill_filesystem, wait_for

MORE = POSTS + [{"id": i, "title": f"Post {i}", "body": "x" * 300} for i in range(3, 100)]


def seed(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    return setup.cache_file("posts").read_bytes()


@pytest.fixture
def small_cache(setup):
    """The account's cache folder on a 64 KiB tmpfs."""
    folder = setup.cache / setup.account
    folder.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0750", "tmpfs", str(folder)], check=True)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def test_cache_directory_full_keeps_old_copy(server, setup, small_cache):
    before = seed(server, setup)
    filler = small_cache / "filler"
    fill_filesystem(filler)
    server.set_records("posts", MORE)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "posts: Failed to write cache file" in r.stderr
    assert "No space left on device" in r.stderr
    assert "keeping the previous copy" in r.stderr
    assert f"free space on the file system of {small_cache}, then run syncd --once again" in r.stderr, r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
    # Space comes back: the next run publishes the stored listing even though the server says nothing changed.
    filler.unlink()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == MORE


def test_read_only_cache_directory_keeps_old_copy(server, setup, small_cache):
    before = seed(server, setup)
    subprocess.run(["mount", "-o", "remount,ro", str(small_cache)], check=True)
    server.set_records("posts", MORE)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "Read-only file system" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []


def test_damaged_cache_file_is_moved_aside_and_rebuilt(server, setup):
    seed(server, setup)
    path = setup.cache_file("posts")
    path.write_bytes(b'{"schemaVersion":1,"source":"posts","records":[{"id":1')
    server.fault("posts", kind="status", status=503)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "cache file was damaged (document is incomplete); moved it to" in r.stderr
    assert "the store holds no other copy of the records, so the next refresh fetches the whole listing again" in r.stderr
    aside = [p for p in path.parent.iterdir() if p.name.startswith("posts.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes().endswith(b'{"id":1')
    # The cache file is the only copy of the bodies: nothing to rebuild from while the server fails.
    assert not path.exists()
    # The server is back: the listing is fetched whole, unconditionally, and the file comes back.
    server.clear_fault("posts")
    server.clear_requests()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "posts: synced 2 records (listing changed)" in r.stderr, r.stderr
    assert [req["headers"].get("if-none-match") for req in server.requests("/posts")] == [None]
    assert setup.cache_doc("posts")["records"] == POSTS


def test_unknown_schema_version_is_moved_aside(server, setup):
    seed(server, setup)
    path = setup.cache_file("posts")
    path.write_text('{"schemaVersion":7,"source":"posts","records":[]}\n')
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "unknown schemaVersion" in r.stderr
    assert setup.cache_doc("posts")["schemaVersion"] == 1


@pytest.mark.parametrize("damage", ["garbage", "future-version"])
def test_damaged_database_is_moved_aside_and_rebuilt(server, setup, damage):
    seed(server, setup)
    db = setup.db()
    if damage == "garbage":
        for suffix in ("-wal", "-shm"):
            if os.path.exists(str(db) + suffix):
                os.unlink(str(db) + suffix)
        db.write_bytes(b"this is not a database" * 100)
    else:
        with sqlite3.connect(db) as c:
            c.execute("PRAGMA user_version = 99")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "was unusable" in r.stderr and "moved it to" in r.stderr
    aside = [p for p in db.parent.iterdir() if p.name.startswith("state.db.corrupt-")]
    assert aside
    assert setup.cache_doc("posts")["records"] == POSTS
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT sum(records) FROM chunks WHERE source = 'posts'").fetchone()[0] == 2


# A database damaged below its header: SQLite opens it and fails only the operations that read the damaged
# pages. The refresh that finds it moves it aside and fetches the source again into an empty database.

BIG = [{"id": i, "title": f"Post {i}", "body": "x" * 2000} for i in range(2000)]
BIG2 = [dict(r, title=f"Post {r['id']} (edited)") for r in BIG]


def damage_database(db):
    """Folds the WAL into state.db, then writes 64 KiB of random bytes into its middle; returns the damaged bytes."""
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(size // 2)
        f.write(random.Random(11).randbytes(65536))
    return db.read_bytes()


def park_a_local_change(db):
    """A local change the server refused earlier, waiting for a person: it lives only in the database."""
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO outbox (source, record_id, operation, body, created_at, idempotency_key, state) "
                  "VALUES ('posts', 'new-1', 'create', '{\"title\":\"mine\"}', '2026-11-29T10:00:00Z', 'k1', 'parked')")


def set_aside_databases(db):
    return sorted(p for p in db.parent.iterdir() if p.name.startswith("state.db.corrupt-"))


def assert_rebuilt(setup, records):
    assert setup.cache_doc("posts")["records"] == records
    assert setup.cache_doc("posts")["pending"] == []
    with sqlite3.connect(setup.db()) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT sum(records) FROM chunks WHERE source = 'posts'").fetchone()[0] == len(records)
        assert c.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0


def test_database_damaged_below_its_header_is_set_aside_and_rebuilt_in_the_same_run(server, setup):
    server.set_records("posts", BIG)
    setup.add_source("posts", server.url("posts"), Writable="yes")
    assert setup.syncd("--once").returncode == 0
    db = setup.db()
    park_a_local_change(db)
    damaged = damage_database(db)
    server.set_records("posts", BIG2)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    aside = set_aside_databases(db)
    assert [p.name for p in aside if not p.name.endswith(("-wal", "-shm"))] == [aside[0].name]
    assert (f"State database {db} is damaged (SQLite said \"database disk image is malformed\", code " in r.stderr
            or f"State database {db} is damaged (SQLite said \"file is not a database\", code " in r.stderr), r.stderr
    assert f"moved it to {aside[0]} (kept for recovery); it held 1 pending local change, set aside with the file and not sent; " \
           "starting with an empty one, rebuilt from the servers by the next refresh" in r.stderr
    # Here the startup found it (the parked change made it read the listing to restore the cache file),
    # so the first refresh already runs on the new database.
    assert "posts: synced 2000 records" in r.stderr
    # The damaged file is kept as it was, for recovery; the new one holds the server's listing.
    assert aside[0].read_bytes() == damaged
    assert_rebuilt(setup, BIG2)
    # The next run finds a sound store: nothing more is set aside.
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "damaged" not in r.stderr
    assert len(set_aside_databases(db)) == len(aside)


def test_damaged_database_while_the_server_fails_keeps_serving_the_cache(server, setup):
    server.set_records("posts", BIG)
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    damage_database(setup.db())
    server.fault("posts", kind="status", status=503)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "posts: HTTP 503" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
    # The server is back: the damage is found, the file set aside and the listing stored afresh.
    server.clear_fault("posts")
    server.set_records("posts", BIG2)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "is damaged (SQLite said" in r.stderr
    assert "(kept for recovery); it held no pending local changes; starting with an empty one" in r.stderr
    assert "posts: refreshing again into the new state database" in r.stderr
    assert set_aside_databases(setup.db())
    assert_rebuilt(setup, BIG2)


def test_daemon_replaces_a_damaged_database_without_a_restart(server, setup, daemons):
    server.set_records("posts", BIG)
    server.set_records("users", [{"id": "u1"}])
    setup.add_source("posts", server.url("posts"))
    setup.add_source("users", server.url("users"))
    setup.write_main("[Network]\nWatchLinks=no\nDebounceSec=200ms\n")
    d = daemons(setup)
    d.wait_log("posts: synced 2000 records", timeout=30)
    d.wait_log("users: synced 1 record ")
    damage_database(setup.db())
    server.set_records("posts", BIG2)
    syncctl = [str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager")]
    r = subprocess.run(syncctl + ["refresh", "posts", "--wait"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr + d.output()
    log = d.output()
    assert "is damaged (SQLite said" in log and "(kept for recovery)" in log, log
    assert "posts: refreshing again into the new state database" in log
    assert set_aside_databases(setup.db())
    assert_rebuilt(setup, BIG2)
    status = json.loads(subprocess.run(syncctl + ["status", "--json"], capture_output=True, text=True, timeout=30).stdout)
    assert status["sources"][0]["records"] == 2000 and status["sources"][0]["lastError"] is None
    # The other source's rows went with the damaged file: it is rebuilt from its server too, unasked.
    assert "Rebuilding every source into the new state database" in d.output()
    d.wait_log("users: synced 1 record ", count=2, timeout=10)
    def users_rows():
        with sqlite3.connect(setup.db()) as c:
            return c.execute("SELECT sum(records) FROM chunks WHERE source = 'users'").fetchone()[0]
    wait_for(lambda: users_rows() == 1, what="users rebuilt in the new database")
    assert d.proc.poll() is None


# A cache file damaged in the middle: the head and tail look right, only the recorded fingerprint tells.

def damage_cache_file(path, how):
    data = path.read_bytes()
    if how == "same-size":
        assert b"Post 2" in data
        data = data.replace(b"Post 2", b"\x00\xff{{{{", 1)
    else:
        data = data.replace(b"Post 2", b"Post 2 and more", 1)
    path.write_bytes(data)
    old = time.mktime((2020, 1, 1, 0, 0, 0, 0, 0, -1))
    os.utime(path, (old, old))
    return data


def corrupt_cache_files(setup):
    return sorted(p for p in (setup.cache / setup.account).iterdir() if p.name.startswith("posts.json.corrupt-"))


@pytest.mark.parametrize("how,reason", [
    ("same-size", "its content differs from what syncd wrote"),
    ("longer", "its size is"),
])
def test_cache_file_damaged_mid_file_is_moved_aside_and_rewritten(server, setup, how, reason):
    seed(server, setup)
    path = setup.cache_file("posts")
    damaged = damage_cache_file(path, how)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    aside = corrupt_cache_files(setup)
    assert len(aside) == 1 and aside[0].read_bytes() == damaged
    assert f"posts: cache file was damaged ({reason}" in r.stderr
    assert f"moved it to {aside[0]}" in r.stderr
    # The file was the only copy of the bodies: the listing is fetched whole (no If-None-Match), not confirmed.
    assert "posts: synced 2 records (listing changed)" in r.stderr, r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS
    assert setup.leftovers() == []


def daemon_over_a_seeded_cache(server, setup, daemons):
    """A daemon started over a cache file `syncd --once` wrote, once its first refresh confirmed it (304);
    returns it and the syncctl command line that talks to it."""
    seed(server, setup)
    setup.write_main("[Network]\nWatchLinks=no\n")
    d = daemons(setup)
    d.wait_log("posts: not modified (HTTP 304)")
    return d, [str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager")]


def test_cache_file_damaged_while_the_daemon_runs_is_caught_by_the_next_refresh(server, setup, daemons):
    d, syncctl = daemon_over_a_seeded_cache(server, setup, daemons)
    path = setup.cache_file("posts")
    damaged = damage_cache_file(path, "same-size")
    r = subprocess.run(syncctl + ["refresh", "posts", "--wait"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    d.wait_log("posts: synced 2 records (listing changed)")
    aside = corrupt_cache_files(setup)
    assert len(aside) == 1 and aside[0].read_bytes() == damaged
    assert (f"posts: cache file was damaged (its content differs from what syncd wrote); moved it to {aside[0]}; "
            "the store holds no other copy of the records, so the next refresh fetches the whole listing again") in d.output()
    assert setup.cache_doc("posts")["records"] == POSTS


@pytest.mark.parametrize("touched", [False, True])
def test_untouched_cache_file_only_has_its_mtime_moved_by_a_304(server, setup, touched):
    seed(server, setup)
    path = setup.cache_file("posts")
    before = path.read_bytes()
    inode = path.stat().st_ino
    old = time.time() - 3600
    if touched:
        # Someone else moved the mtime (and so the change time): the file is hashed, found intact, kept.
        os.utime(path, (old, old))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "posts: not modified (HTTP 304)" in r.stderr
    assert "damaged" not in r.stderr
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode, "file was rewritten"
    assert path.stat().st_mtime > old + 3000
    assert corrupt_cache_files(setup) == []


def replace_by_link(setup, tmp_path):
    """Moves the cache file out of the cache folder, same inode and bytes, and puts a symbolic link to it in its
    place; the file outside gets an old mtime. Returns the file outside, its bytes and mtime."""
    path = setup.cache_file("posts")
    outside = tmp_path / "outside.json"
    os.rename(path, outside)
    os.symlink(outside, path)
    old = time.time() - 3600
    os.utime(outside, (old, old))
    return outside, outside.read_bytes(), outside.stat().st_mtime


def assert_link_moved_aside_and_untouched(setup, output, outside, before, mtime):
    aside = corrupt_cache_files(setup)
    assert len(aside) == 1 and aside[0].is_symlink() and os.readlink(aside[0]) == str(outside)
    assert f"posts: cache file was damaged (it is a symbolic link, which syncd never follows in the cache folder); " \
           f"moved it to {aside[0]}" in output, output
    # Nothing outside the cache folder was read as the cache, written or touched.
    assert (outside.read_bytes(), outside.stat().st_mtime) == (before, mtime)
    path = setup.cache_file("posts")
    assert not path.is_symlink() and setup.cache_doc("posts")["records"] == POSTS


def test_a_cache_file_replaced_by_a_symbolic_link_is_moved_aside_at_start(server, setup, tmp_path):
    seed(server, setup)
    outside, before, mtime = replace_by_link(setup, tmp_path)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert_link_moved_aside_and_untouched(setup, r.stderr, outside, before, mtime)
    assert "posts: synced 2 records (listing changed)" in r.stderr, r.stderr


def test_a_cache_file_replaced_by_a_symbolic_link_while_running_is_never_touched(server, setup, daemons, tmp_path):
    d, syncctl = daemon_over_a_seeded_cache(server, setup, daemons)
    outside, before, mtime = replace_by_link(setup, tmp_path)
    # A read does not follow the link either: it says so, and reads nothing outside.
    r = subprocess.run(syncctl + ["get", "posts", "1"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "it is a symbolic link, which syncd never follows" in r.stderr, r.stdout + r.stderr
    # The server answers 304: the confirmation finds the link and moves it aside instead of touching its target.
    r = subprocess.run(syncctl + ["refresh", "posts", "--wait"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    d.wait_log("posts: synced 2 records (listing changed)")
    assert_link_moved_aside_and_untouched(setup, d.output(), outside, before, mtime)


def test_a_read_says_which_property_of_a_replaced_cache_file_differs(server, setup, daemons):
    _, syncctl = daemon_over_a_seeded_cache(server, setup, daemons)
    path = setup.cache_file("posts")
    before = path.read_bytes()
    inode = path.stat().st_ino
    # The same bytes in another file renamed into place: only the inode differs.
    copy = path.with_name("copy.json")
    copy.write_bytes(before)
    os.rename(copy, path)
    r = subprocess.run(syncctl + ["get", "posts", "1"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0, r.stdout
    assert f"the store expects {inode}: another file took its place" in r.stderr, r.stderr
    assert "its size is" not in r.stderr, r.stderr
    assert path.read_bytes() == before


def run_once_damaging(setup, server, slow, damaged):
    """`syncd --once` while source `slow`'s request is held 1.5 s by the server: once it has reached the server,
    the cache file of `damaged` is cut to 100 bytes. Returns the finished run."""
    server.clear_requests()
    server.options(slow, delay=1.5)
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    env.pop("NOTIFY_SOCKET", None)
    run = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: server.requests(f"/{slow}"), what=f"the request for {slow}")
        os.truncate(setup.cache_file(damaged), 100)
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


@pytest.mark.parametrize("damaged", ["late", "early"])
def test_a_cache_file_damaged_during_a_run_is_fetched_whole_in_the_same_run(server, setup, damaged):
    """`--once` checks every cache file when it starts and not again before each request; a file damaged later
    in the run (during the refresh of a source before it — "early" is refreshed before "late", in file-name
    order — or during its own request) is found by the 304's
    confirmation, set aside, and its listing fetched whole at once: the run succeeds and the apps have the file."""
    records = [{"id": n, "title": f"Post {n}"} for n in range(1, 201)]
    server.set_records("early", POSTS)
    server.set_records("late", records)
    setup.add_source("early", server.url("early"))
    setup.add_source("late", server.url("late"))
    assert setup.syncd("--once").returncode == 0
    r = run_once_damaging(setup, server, "early", damaged)
    assert r.returncode == 0, r.stderr
    aside = sorted(p for p in (setup.cache / setup.account).iterdir() if p.name.startswith(f"{damaged}.json.corrupt-"))
    assert len(aside) == 1 and aside[0].stat().st_size == 100, r.stderr
    assert f"{damaged}: cache file was damaged (its size is 100 bytes" in r.stderr, r.stderr
    assert f"{damaged}: fetching the whole listing again now" in r.stderr, r.stderr
    expected = records if damaged == "late" else POSTS
    assert f"{damaged}: synced {len(expected)} records (listing changed)" in r.stderr, r.stderr
    # Fetched whole: the second request for the damaged source carried no validator.
    requests = server.requests(f"/{damaged}")
    assert len(requests) == 2 and "if-none-match" in requests[0]["headers"] and "if-none-match" not in requests[1]["headers"]
    assert setup.cache_doc(damaged)["records"] == expected
    assert setup.cache_doc("late" if damaged == "early" else "early")["records"] == (POSTS if damaged == "late" else records)
    assert setup.leftovers() == []


def test_a_state_folder_full_during_a_first_run_says_what_to_do_and_leaves_nothing_aside(server, setup):
    """`syncd --once` builds a new state database aside and puts it in place at the end (docs/architecture.md, "A
    store built aside"). The state folder fills while the listing is on its way: the listing's commit fails, the
    run says the folder is full and what to do, puts in place what it could write (whole), leaves nothing aside,
    and the next run, with room again, syncs the listing."""
    folder = setup.state / setup.account
    folder.mkdir(parents=True, mode=0o700)
    setup.state.chmod(0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(folder)], check=True)
    try:
        records = [{"id": i, "title": f"Post {i}"} for i in range(1, 20001)]
        server.set_records("posts", records)
        setup.add_source("posts", server.url("posts"))
        server.fault("posts", kind="hold", method="GET", times=1)
        proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: server.requests("/posts"), what="the listing's request")
        assert sorted(p.name for p in folder.iterdir()) == ["state.db.new"]
        filler = fill_filesystem(folder / "filler")
        server.release("posts")
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 1, stderr
        assert f"is full: free some space in {folder}, then run syncd --once again" in stderr, stderr
        assert "syncctl" not in stderr, stderr         # no daemon to ask
        assert sorted(p.name for p in folder.iterdir()) == ["filler", "state.db", "state.db-shm", "state.db-wal"], stderr
        filler.unlink()
        with sqlite3.connect(folder / "state.db") as db:     # (SQLite needs room for its shared memory to read it)
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert db.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
        db.close()
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert setup.cache_doc("posts")["records"] == records
        assert sorted(p.name for p in folder.iterdir()) == ["state.db", "state.db-shm", "state.db-wal"]
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_read_only_state_folder_without_a_database_says_so(server, setup):
    """SQLite says only "unable to open database file": syncd names the folder and what to do. A file a killed first run
    left aside that cannot be removed is said too; the next run with the folder writable removes it, and says so."""
    folder = setup.state / setup.account
    folder.mkdir(parents=True, mode=0o700)
    setup.state.chmod(0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(folder)], check=True)
    try:
        (folder / "state.db.new").write_bytes(b"left by a first run that was killed")
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        server.set_records("posts", POSTS)
        setup.add_source("posts", server.url("posts"))
        r = setup.syncd("--once")
        assert r.returncode == 1
        assert f"syncd: Failed to open database {folder}/state.db: unable to open database file; the state folder {folder} " \
               "cannot be written (a read-only file system?): make it writable (SQLite code 14)" in r.stderr, r.stderr
        assert f"remove {folder}/state.db.new, left by a run that did not finish: Read-only file system" in r.stderr, r.stderr
        assert "remove it by hand" in r.stderr, r.stderr
        assert [p.name for p in folder.iterdir()] == ["state.db.new"]
        assert not setup.cache_file("posts").exists()
        subprocess.run(["mount", "-o", "remount,rw", str(folder)], check=True)
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert f"Removed {folder}/state.db.new, left behind by a first run that did not finish" in r.stderr, r.stderr
        assert setup.cache_doc("posts")["records"] == POSTS
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_state_folder_full_before_a_first_run_says_so_and_leaves_nothing_behind(server, setup):
    """No room for even the new database: building it aside fails, and so does creating it in place, which says
    what is wrong; what the attempt aside wrote is gone (it held space), and the next run with room syncs."""
    folder = setup.state / setup.account
    folder.mkdir(parents=True, mode=0o700)
    setup.state.chmod(0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(folder)], check=True)
    try:
        server.set_records("posts", POSTS)
        setup.add_source("posts", server.url("posts"))
        filler = fill_filesystem(folder / "filler")
        r = setup.syncd("--once")
        assert r.returncode == 1
        assert "database or disk is full" in r.stderr, r.stderr
        assert sorted(p.name for p in folder.iterdir() if not p.name.startswith("state.db")) == ["filler"]
        assert not [p.name for p in folder.iterdir() if p.name.startswith("state.db.new")], r.stderr
        filler.unlink()
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert setup.cache_doc("posts")["records"] == POSTS
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
