"""The cache file is the only copy of the bodies (docs/architecture.md, "Storing listings"): a crash between
the store's commit and the rename is finished at the next start without a refetch; the store holds no
bodies; `syncctl get` in a large listing reads one chunk of the file, not the listing."""
import json
import sqlite3
import subprocess

from conftest import BIN, POSTS, fill_filesystem, wait_for
from test_once_storage import MORE, seed, small_cache  # noqa: F401 (small_cache is a fixture)
from test_syncctl import syncctl


def test_a_crash_between_the_commit_and_the_rename_is_finished_at_the_next_start(server, setup):
    before = seed(server, setup)
    server.set_records("posts", MORE)
    # SIGKILL at the first rename: the store has committed the new listing, the file is not in place yet.
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2",
                        "-e", "inject=rename,renameat,renameat2:signal=SIGKILL:when=1",
                        str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0, r.stderr
    assert setup.cache_file("posts").read_bytes() == before      # apps still read the old copy, whole
    leftovers = setup.leftovers()
    with sqlite3.connect(f"file:{setup.db()}?mode=ro", uri=True) as db:
        pending, etag = db.execute("SELECT pending_rename, etag FROM sources WHERE name = 'posts'").fetchone()
    db.close()
    assert leftovers == [pending], (leftovers, pending)

    server.clear_requests()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "posts: finished replacing the cache file, which an interrupted run had left half done" in r.stderr, r.stderr
    # Nothing fetched again: the listing the killed run committed is confirmed with its ETag.
    assert "posts: not modified (HTTP 304), 99 records current" in r.stderr, r.stderr
    assert [req["headers"].get("if-none-match") for req in server.requests("/posts")] == [etag]
    assert setup.cache_doc("posts")["records"] == MORE
    assert setup.leftovers() == []


def test_the_store_holds_an_index_not_the_bodies(server, setup):
    seed(server, setup)
    server.set_records("posts", MORE)
    assert setup.syncd("--once").returncode == 0
    with sqlite3.connect(f"file:{setup.db()}?mode=ro", uri=True) as db:
        blobs = b"".join(row[0] for row in db.execute("SELECT data FROM chunks WHERE source = 'posts'"))
        records, file_bytes = db.execute("SELECT sum(records), sum(file_bytes) FROM chunks WHERE source = 'posts'").fetchone()
    db.close()
    assert records == len(MORE)
    assert b"Post 50" not in blobs and b"xxxxxxxx" not in blobs
    data = setup.cache_file("posts").read_bytes()
    # The chunks' ranges start after the header's padding and end with their own (docs/syncd.cache.5.md).
    start = data.index(b'"records":[') + 11
    assert data[start:4096] == b" " * (4096 - start)
    assert file_bytes == len(data[4096:data.index(b'\n],\n"pending"')]) and file_bytes % 4096 == 0


def read_bytes(pid):
    return int(next(line for line in open(f"/proc/{pid}/io") if line.startswith("rchar:")).split()[1])


def test_get_in_a_large_listing_reads_one_chunk(server, setup, daemons):
    records = [{"id": i, "title": f"Post {i}", "body": "y" * 100} for i in range(1, 100_001)]
    server.set_records("posts", records)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 100000 records", timeout=60)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert setup.cache_file("posts").stat().st_size > 12_000_000
    before = read_bytes(d.proc.pid)
    r = syncctl(setup, "get", "posts", "77777")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == records[77776]
    # One index row, one chunk row and its ~70 KiB of the file: far from the 12 MB a scan would read.
    assert read_bytes(d.proc.pid) - before < 1_000_000
    r = syncctl(setup, "get", "posts", "100001")
    assert r.returncode != 0 and "100001" in r.stderr, r.stderr


def test_a_local_change_a_full_disk_kept_out_of_the_file_is_counted_then_written(server, setup, daemons, small_cache):
    """The outbox is written durably first; when the cache file cannot be rewritten the store is ahead of
    the file, says so (the cache truth rule) and writes it once there is room."""
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n")
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=503, method="POST")      # the change stays queued
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    before = setup.cache_file("posts").read_bytes()
    filler = fill_filesystem(small_cache / "filler")
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                       input=json.dumps({"id": 3, "title": "Three " + "x" * 2000}), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr                                    # queued durably: the state folder has room
    # The put says so itself: its ID on stdout, the file it could not write on stderr.
    assert r.stdout == "3\n"
    assert r.stderr == ("syncctl: warning: the change is stored, but syncd could not write the cache file of posts: "
                        "1 record is not yet written to it (see 'syncctl status'; free disk space, syncd retries)\n"), r.stderr
    # Only the new record is missing from the file: the two it holds are as the store has them.
    d.wait_log("keeping the previous copy (2 cached records; 1 record not yet written to the cache file): write ")
    assert "No space left on device" in d.output()
    assert setup.cache_file("posts").read_bytes() == before and setup.leftovers() == []
    r = syncctl(setup, "list", "posts", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 3
    assert "the cache file of posts holds 2 records; 1 record listed here is not yet written" in r.stderr, r.stderr
    # Another new record, then the first one changed again: two records the file lacks, each counted once.
    for record in ({"id": 4, "title": "Four"}, {"id": 3, "title": "Three again"}):
        r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                           input=json.dumps(record), capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert "2 records are not yet written to it" in r.stderr, r.stderr
    d.wait_log("keeping the previous copy (2 cached records; 2 records not yet written to the cache file): write ", count=2)
    assert setup.cache_file("posts").read_bytes() == before
    r = syncctl(setup, "list", "posts", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 4
    assert "the cache file of posts holds 2 records; 2 records listed here are not yet written" in r.stderr, r.stderr
    status = json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]
    assert status["records"] == 2, status

    filler.unlink()
    syncctl(setup, "refresh", "posts", "--wait")                          # the push fails (503); the file is written
    doc = setup.cache_doc("posts")
    assert [record["id"] for record in doc["records"]] == [1, 2, 3, 4] and doc["pending"] == [3, 4]
    assert doc["records"][2]["title"] == "Three again"
    assert syncctl(setup, "list", "posts").stderr == ""
    # With room again, a change says nothing more.
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "delete", "posts", "4"],
                       capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
