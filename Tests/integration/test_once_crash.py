"""SIGKILL at random moments during refreshes of a 100k-record collection: the cache file is always one
complete version and the database passes PRAGMA integrity_check."""
import json
import random
import sqlite3
import subprocess
import time

from conftest import BIN

COUNT = 100_000


def listing(version):
    return json.dumps([{"id": i, "title": f"Post {i}", "author": "A", "v": version} for i in range(COUNT)]).encode()


def check_cache(setup, versions_seen):
    path = setup.cache_file("posts")
    if not path.exists():
        return None
    doc = json.loads(path.read_bytes())
    records = doc["records"]
    assert len(records) == COUNT
    versions = {r["v"] for r in records}
    assert len(versions) == 1, f"mixed versions {versions}"
    version = versions.pop()
    assert version in versions_seen
    return version


def test_sigkill_during_refresh_never_leaves_a_partial_cache(server, setup):
    rng = random.Random(20261129)
    setup.add_source("posts", server.url("posts"))
    server.set_raw("posts", listing(0))
    r = setup.syncd("--once", timeout=120)
    assert r.returncode == 0, r.stderr
    start = time.monotonic()
    subprocess.run([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"], capture_output=True, timeout=120)
    full_run = max(0.05, time.monotonic() - start)
    published = {0}
    kills = 0
    for version in range(1, 13):
        server.set_raw("posts", listing(version))
        published.add(version)
        proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Kill somewhere between the start and about three times a full refresh's duration.
        time.sleep(rng.uniform(0, full_run * 3))
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.wait()
        check_cache(setup, published)
        assert setup.leftovers() == [] or proc.returncode == -9
        with sqlite3.connect(setup.db()) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert kills >= 3, "the test did not interrupt enough refreshes to mean anything"
    # After the storm a normal run converges on the newest version and cleans up.
    r = setup.syncd("--once", timeout=120)
    assert r.returncode == 0, r.stderr
    assert check_cache(setup, published) == 12
    assert setup.leftovers() == []


def test_sigkill_during_first_runs_never_leaves_a_partial_database(server, setup):
    """A first run builds its database aside and renames it into place at the end (docs/architecture.md, "A store
    built aside"): killed at any moment, it leaves either no state.db or a whole one, and the next run starts over
    from what is there (a cache file without its database included)."""
    setup.add_source("posts", server.url("posts"))
    server.set_raw("posts", listing(0))
    r = setup.syncd("--once", timeout=120)
    assert r.returncode == 0, r.stderr
    # A warm first run's duration (the cold one above loads everything from disk).
    setup.db().unlink()
    start = time.monotonic()
    r = setup.syncd("--once", timeout=120)
    full_run = max(0.05, time.monotonic() - start)
    assert r.returncode == 0, r.stderr
    aside = setup.db().with_name("state.db.new")
    published = {0}
    kills = 0
    for version in range(1, 9):
        server.set_raw("posts", listing(version))
        published.add(version)
        # A first run again: only the database goes; its log and shared-memory file stay, as when it is deleted
        # by hand, and so does whatever the previous kill left.
        setup.db().unlink(missing_ok=True)
        proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Kill points spread over a first run's duration, from its start to near its end.
        time.sleep(full_run * (version - 1) / 9)
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.wait()
        check_cache(setup, published)
        if proc.returncode == 0:
            assert not aside.exists()
        if setup.db().exists():
            with sqlite3.connect(setup.db()) as db:
                assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
                assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
                assert db.execute("SELECT record_count FROM sources WHERE name = 'posts'").fetchone()[0] == COUNT
        else:
            assert proc.returncode == -9
    assert kills >= 5, "the test did not interrupt enough first runs to mean anything"
    # Whatever the storm left, a first run converges on the newest version and leaves nothing aside.
    setup.db().unlink(missing_ok=True)
    r = setup.syncd("--once", timeout=120)
    assert r.returncode == 0, r.stderr
    assert check_cache(setup, published) == 8
    assert sorted(p.name for p in setup.db().parent.iterdir()) == ["state.db", "state.db-shm", "state.db-wal"]
    with sqlite3.connect(setup.db()) as db:
        assert db.execute("SELECT record_count FROM sources WHERE name = 'posts'").fetchone()[0] == COUNT
