"""The cache truth rule (docs/architecture.md, "The cache file"): counts and messages describe the file apps
read. A listing a full disk kept out of the cache file is not stored either (the file is the only copy of the
bodies), so status, list and messages count what the file holds, and the next refresh fetches it again and is
reported `updated` (Watch says `saved`); a failed folder flush after the rename says the new copy is in place."""
import json
import subprocess

import pytest

from conftest import BIN, POSTS, fill_filesystem, wait_for
from test_once_storage import MORE, seed, small_cache  # noqa: F401 (small_cache is a fixture)
from test_syncctl import Watch, syncctl

HELD_BACK = "keeping the previous copy (2 cached records): write "


@pytest.fixture
def patient(setup):
    """No automatic retry during the test: only the refreshes it asks for run."""
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n")


def source_status(setup):
    return json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]


def next_attempt_scheduled(setup):
    """Never "error"; between two attempts the next one is scheduled (during one, "syncing" has none)."""
    status = source_status(setup)
    assert status["state"] != "error", status
    return status["state"] != "syncing" and status["nextAttempt"] is not None


@pytest.mark.parametrize("validators", [True, False], ids=["304", "identical-listing"])
def test_a_listing_a_full_disk_held_back_is_counted_as_not_written_then_reported_updated_and_saved(
        small_cache, patient, running, setup, server, validators):
    if not validators:
        server.options("posts", noValidators=True)
    watch = Watch(setup, "--json")
    try:
        assert (json.loads(watch.line())["event"], setup.cache_doc("posts")["records"]) == ("current", POSTS)
        before = setup.cache_file("posts").read_bytes()
        filler = fill_filesystem(small_cache / "filler")
        server.set_records("posts", MORE)
        r = syncctl(setup, "refresh", "posts", "--wait")
        assert r.returncode == 1
        assert HELD_BACK in r.stderr and "No space left on device" in r.stderr, r.stderr
        assert setup.cache_file("posts").read_bytes() == before and setup.leftovers() == []

        # Status counts the file apps read, and says what is not in it yet.
        status = source_status(setup)
        assert status["records"] == 2, status
        assert HELD_BACK in status["lastError"], status
        assert "2 records" in syncctl(setup, "status").stdout
        # list shows what the file holds: the store took nothing the file did not.
        r = syncctl(setup, "list", "posts", "--json")
        assert r.returncode == 0 and len(json.loads(r.stdout)) == 2
        assert r.stderr == "", r.stderr

        # Space again: the server has nothing new (a 304, or the same listing), yet apps get a new file.
        filler.unlink()
        r = syncctl(setup, "refresh", "posts", "--wait")
        assert (r.returncode, r.stdout, r.stderr) == (0, "posts: updated, 99 records\n", ""), r.stderr
        # The failed refresh sent only that the copy went stale (the file unchanged, its 2 records), and why.
        event = json.loads(watch.line())
        assert (event["event"], event["records"]) == ("stale", 2) and HELD_BACK in event["reason"], event
        event = json.loads(watch.line())
        assert (event["event"], event["records"]) == ("saved", 99), event
        assert json.loads(watch.line())["event"] == "fresh"
        doc = setup.cache_doc("posts")
        assert doc["records"] == MORE and event["savedAt"] == doc["savedAt"]
        status = source_status(setup)
        assert (status["records"], status["lastError"]) == (99, None), status
        assert running.output().count("posts: synced 99 records (listing changed)") == 1
        r = syncctl(setup, "list", "posts")
        assert r.returncode == 0 and r.stderr == ""

        # Now the file is current: a refresh that changes nothing is unchanged again, and Watch says nothing.
        r = syncctl(setup, "refresh", "posts", "--wait")
        assert (r.returncode, r.stdout) == (0, "posts: unchanged, 99 records\n"), r.stderr
        server.set_records("posts", POSTS)
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        event = json.loads(watch.line())
        assert (event["event"], event["records"]) == ("saved", 2), event
    finally:
        watch.stop()


def test_once_counts_what_the_cache_file_holds_after_a_failed_write(server, setup, small_cache):
    before = seed(server, setup)
    filler = fill_filesystem(small_cache / "filler")
    server.set_records("posts", MORE)
    r = setup.syncd("--once")
    assert r.returncode == 1
    lines = [line for line in r.stderr.splitlines() if line.startswith("posts: ")]
    assert len(lines) == 1 and HELD_BACK in lines[0], r.stderr
    assert "kept" not in lines[0]                       # said once, not twice
    # Still full, the server unchanged: the next run says the same, not "kept 99 cached records".
    r = setup.syncd("--once")
    assert r.returncode == 1 and HELD_BACK in r.stderr, r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    filler.unlink()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == MORE


def test_a_failed_folder_flush_says_the_new_copy_is_in_place(server, setup):
    seed(server, setup)
    server.set_records("posts", MORE)
    folder = setup.cache / setup.account
    # Every fsync(2) of the cache folder fails with EIO (-P: only system calls on that path are tampered with).
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-P", str(folder), "-e", "trace=fsync",
                        "-e", "inject=fsync:error=EIO", str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert (f"posts: Replaced cache file {setup.cache_file('posts')} with 99 records, but failed to flush directory {folder}: "
            "Input/output error: the new copy is in place and apps read it, yet the replacement may not survive "
            "a power cut\n") in r.stderr, r.stderr
    assert "keeping the previous copy" not in r.stderr
    assert setup.cache_doc("posts")["records"] == MORE and setup.leftovers() == []
    # The store knows the file holds the new listing: the next run confirms it (a 304) without a word.
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "posts: not modified (HTTP 304), 99 records current\n" in r.stderr and "cache file" not in r.stderr, r.stderr
    assert setup.cache_doc("posts")["records"] == MORE


@pytest.fixture
def quick_retries(setup):
    """Short retry delays and only two attempts per cycle, no reachability probe."""
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=500ms\nMaxAttempts=2\n[Network]\nReachabilityIntervalSec=0\n")


def test_a_full_disk_is_retried_past_max_attempts_and_the_source_recovers_once_space_returns(
        small_cache, quick_retries, running, setup, server):
    # A full disk is a local condition, not the server's: never given up, and the message says what to do.
    d = running
    before = setup.cache_file("posts").read_bytes()
    filler = fill_filesystem(small_cache / "filler")
    server.set_records("posts", MORE)
    server.clear_requests()
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 1
    assert HELD_BACK in r.stderr and "No space left on device" in r.stderr, r.stderr
    assert f"free space on the file system of {small_cache}, then run `syncctl refresh posts`" in r.stderr, r.stderr
    # Twice MaxAttempts= and more: still retrying, never resting in "error" without a next attempt.
    wait_for(lambda: len([q for q in server.requests("/posts") if q["method"] == "GET"]) >= 5, timeout=10,
             what="retries past MaxAttempts=")
    wait_for(lambda: next_attempt_scheduled(setup), what="the next attempt scheduled between two attempts")
    assert "not retrying until the next trigger" not in d.output()
    assert "until it succeeds (a local failure, not the server's)" in d.output()
    assert setup.cache_file("posts").read_bytes() == before and setup.leftovers() == []
    # Space again: the next retry writes the listing, with no command from anyone.
    filler.unlink()
    d.wait_log("posts: synced 99 records", timeout=5)
    assert setup.cache_doc("posts")["records"] == MORE
    wait_for(lambda: source_status(setup)["lastError"] is None, what="the error to clear")


def test_a_listing_that_outgrows_the_disk_is_retried_with_advice_and_recovers_when_space_grows(
        small_cache, quick_retries, running, setup, server):
    # Larger than the 64 KiB folder and than the writer's buffer: the write fails while the listing streams in.
    big = POSTS + [{"id": i, "title": f"Post {i}", "body": "x" * 300} for i in range(3, 1200)]
    d = running
    before = setup.cache_file("posts").read_bytes()
    server.set_records("posts", big)
    server.clear_requests()
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 1
    assert "No space left on device" in r.stderr, r.stderr
    assert f"free space on the file system of {small_cache}, then run `syncctl refresh posts`" in r.stderr, r.stderr
    wait_for(lambda: len([q for q in server.requests("/posts") if q["method"] == "GET"]) >= 5, timeout=10,
             what="retries past MaxAttempts=")
    wait_for(lambda: next_attempt_scheduled(setup), what="the next attempt scheduled between two attempts")
    assert "until it succeeds (a local failure, not the server's)" in d.output()
    assert setup.cache_file("posts").read_bytes() == before and setup.leftovers() == []
    # The folder grows: the next retry writes the listing, with no command from anyone.
    subprocess.run(["mount", "-o", "remount,size=2m", str(small_cache)], check=True)
    d.wait_log("posts: synced 1199 records", timeout=5)
    assert setup.cache_doc("posts")["records"] == big
