"""A cache file changed outside syncd while the daemon runs (docs/syncd.8.md, "FILES"): the cache file is the
only copy of the records' bodies, so a read that finds bytes the store's index does not describe gets a clear
error, and the daemon recovers as at start-up: the file is moved aside, the listing and its validators are
forgotten (the outbox stays), and the listing is fetched again at once, unconditionally. At start, a source
without a cache file is not said to be served from the cache."""
import json
import re
import subprocess

from conftest import BIN, POSTS, wait_for
from test_syncctl import syncctl

# No automatic retry during a test: only the refreshes the daemon decides on for the damage run.
PATIENT = "[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n"
DAMAGED = "Failed to read the cached records of posts: the cache file "
NEXT = "syncd moves it aside and fetches the listing again: retry in a moment"


def put(setup, record):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                          input=json.dumps(record), capture_output=True, text=True, timeout=30)


def start(setup, server, daemons, **keys):
    setup.write_main(PATIENT)
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), **keys)
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    wait_for(lambda: syncctl(setup, "get", "posts", "1").returncode == 0, what="posts readable")
    return d


def overwrite(path, old: bytes, new: bytes):
    """Overwrites bytes in place, as an app or an administrator would (same size, same inode)."""
    data = path.read_bytes()
    at = data.index(old)
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(new)
    return data[:at] + new + data[at + len(old):]


def without_saved_at(document: bytes) -> bytes:
    return re.sub(rb'"savedAt":"[^"]*"', b'"savedAt":""', document, count=1)


REFETCH = ("no listing held: the cache file was lost or damaged and set aside, and the listing is being fetched again; "
           "until then list and get show only pending local changes")


def status_warnings(setup):
    return json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["warnings"]


def unconditional_gets(server):
    return [r for r in server.requests("/posts") if r["method"] == "GET" and r["headers"].get("if-none-match") is None]


def test_a_damaged_cache_file_is_set_aside_and_fetched_again_while_running_keeping_the_outbox(server, setup, daemons):
    d = start(setup, server, daemons, Writable="yes")
    # A local change the server refuses once: it waits in the outbox (retried in an hour) when the damage is found.
    server.fault("posts", kind="status", status=503, method="PUT", times=1)
    r = put(setup, {"id": 2, "title": "Local note"})
    assert r.returncode == 0, r.stderr
    wait_for(lambda: [e["attempts"] for e in json.loads(syncctl(setup, "outbox", "--json").stdout)] == [1],
             what="the put's push attempted once")
    wait_for(lambda: _idle(setup), what="posts idle")
    assert server.records("posts") == POSTS
    server.clear_requests()
    path = setup.cache_file("posts")
    damaged = overwrite(path, b'"Post 1"', b'"Post X"')

    r = syncctl(setup, "get", "posts", "1")
    assert r.returncode == 1
    assert DAMAGED + str(path) in r.stderr and "was changed or damaged outside syncd" in r.stderr, r.stderr
    assert NEXT in r.stderr, r.stderr

    # The daemon moved the damaged file aside, said so once, and fetched the listing unconditionally, after
    # pushing the change its outbox kept.
    d.wait_log("posts: cache file was damaged")
    wait_for(lambda: len(unconditional_gets(server)) >= 1, what="an unconditional GET of the listing")
    aside = [p for p in path.parent.iterdir() if p.name.startswith("posts.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == damaged
    edited = [POSTS[0], {"id": 2, "title": "Local note"}]
    wait_for(lambda: path.exists() and setup.cache_doc("posts")["records"] == edited, what="the cache file whole again")
    assert server.records("posts") == edited
    assert [(r["method"], r["headers"].get("if-none-match")) for r in server.requests()
            if r["path"].split("?")[0] in ("/posts", "/posts/2")][:2] == [("PUT", None), ("GET", None)]
    wait_for(lambda: _idle(setup), what="posts idle")
    assert json.loads(syncctl(setup, "outbox", "--json").stdout) == []
    r = syncctl(setup, "get", "posts", "1", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == POSTS[0]
    assert d.output().count("posts: cache file was damaged") == 1
    assert len(unconditional_gets(server)) == 1


def test_a_local_change_that_meets_a_damaged_cache_file_recovers_it_and_is_pushed(server, setup, daemons):
    d = start(setup, server, daemons, Writable="yes")
    server.clear_requests()
    path = setup.cache_file("posts")
    overwrite(path, b'"Post 2"', b'"Post Y"')
    # An update of a record whose server copy is in the damaged file: refused, nothing queued.
    r = put(setup, {"id": 1, "title": "Edited"})
    assert r.returncode == 1
    assert "Failed to read the stored record: the cache file " + str(path) in r.stderr and "nothing was changed" in r.stderr, r.stderr
    d.wait_log("posts: cache file was damaged")
    wait_for(lambda: path.exists() and setup.cache_doc("posts")["records"] == POSTS, what="the cache file written again")
    assert [(r["method"], r["headers"].get("if-none-match")) for r in server.requests("/posts")] == [("GET", None)]
    assert json.loads(syncctl(setup, "outbox", "--json").stdout) == []

    # A new record: stored durably; rewriting the cache file meets the damage, which is recovered the same way.
    wait_for(lambda: _idle(setup), what="posts idle")
    server.clear_requests()
    damaged = overwrite(path, b'"Post 2"', b'"Post Z"')
    r = put(setup, {"id": 11, "title": "New"})
    assert r.returncode == 0, r.stderr
    d.wait_log("posts: cache file was damaged", count=2)
    wait_for(lambda: path.exists() and setup.cache_doc("posts")["records"] == POSTS + [{"id": 11, "title": "New"}],
             what="the cache file with the pushed record")
    assert {"id": 11, "title": "New"} in server.records("posts")
    assert [(r["method"], r["headers"].get("if-none-match")) for r in server.requests("/posts")][:2] == [("POST", None), ("GET", None)]
    assert any(p.read_bytes() == damaged for p in path.parent.iterdir() if p.name.startswith("posts.json.corrupt-"))


def test_list_on_a_cache_file_cut_short_answers_clearly_and_recovers(server, setup, daemons):
    d = start(setup, server, daemons)
    server.clear_requests()
    path = setup.cache_file("posts")
    data = path.read_bytes()
    with open(path, "r+b") as f:
        f.truncate(len(data) - 10)
    r = syncctl(setup, "list", "posts")
    assert r.returncode == 1
    assert DAMAGED + str(path) in r.stderr and NEXT in r.stderr, r.stderr
    d.wait_log("posts: cache file was damaged")
    # Byte for byte the same file, but for its savedAt (the time of the new fetch, to the second).
    wait_for(lambda: path.exists() and without_saved_at(path.read_bytes()) == without_saved_at(data),
             what="the cache file written again")
    assert [r["headers"].get("if-none-match") for r in server.requests("/posts")] == [None]
    r = syncctl(setup, "list", "posts", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == POSTS, r.stderr


NO_LISTING = ("syncctl: warning: syncd holds no listing of posts yet: its first refresh has not succeeded, or its cache "
              "file was damaged and the listing is being fetched again; ")


def test_list_while_the_damaged_listing_is_fetched_again_says_so_instead_of_an_empty_listing(server, setup, daemons):
    d = start(setup, server, daemons, Writable="yes", TimeoutSec="60s")
    path = setup.cache_file("posts")
    overwrite(path, b'"Post 1"', b'"Post X"')
    # The listing fetched again is held until the test lets it go: list meanwhile.
    server.fault("posts", kind="hold", method="GET", times=1)
    server.clear_requests()
    assert syncctl(setup, "get", "posts", "1").returncode == 1
    d.wait_log("posts: cache file was damaged")
    wait_for(lambda: server.requests("/posts"), what="the listing being fetched again")
    r = syncctl(setup, "list", "posts")
    assert r.returncode == 0, r.stderr
    assert r.stderr == NO_LISTING + "nothing listed (see 'syncctl status')\n", r.stderr
    assert "0 records listed." in r.stdout
    # The status says why, not only "synced 5s ago".
    assert status_warnings(setup) == [REFETCH]
    assert "    warning: " + REFETCH + "\n" in syncctl(setup, "status").stdout
    # A local change made meanwhile is what the view holds, and said so.
    assert put(setup, {"id": 12, "title": "Offline note"}).returncode == 0
    r = syncctl(setup, "list", "posts", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == [{"id": 12, "title": "Offline note"}], r.stdout
    assert r.stderr == NO_LISTING + "only its pending local changes are listed (see 'syncctl status')\n", r.stderr
    server.release("posts")
    # Once the listing is back and the cache file holds the local change too (the file is rewritten a moment after
    # the store settles the listing: until then `list` says a record is not yet written), no warning, nothing lost.
    def settled():
        r = syncctl(setup, "list", "posts", "--json")
        return r.stderr == "" and json.loads(r.stdout or "[]") == POSTS + [{"id": 12, "title": "Offline note"}]
    wait_for(settled, what="the listing and the local change listed, and written to the cache file", timeout=20)
    assert [r["id"] for r in setup.cache_doc("posts")["records"]] == [r["id"] for r in POSTS] + [12]
    r = syncctl(setup, "list", "posts")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert status_warnings(setup) == []


def test_status_while_a_deleted_cache_file_is_fetched_again_says_no_listing_is_held(server, setup, daemons):
    d = start(setup, server, daemons)
    setup.cache_file("posts").unlink()                           # found by the next refresh, not by a read
    server.fault("posts", kind="hold", method="GET", times=1)   # the listing waits until the test has looked
    server.clear_requests()
    done = subprocess.Popen([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "refresh", "posts", "--wait"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d.wait_log("posts: cache file " + str(setup.cache_file("posts")) + " is missing")
    wait_for(lambda: status_warnings(setup) == [REFETCH], what="the status to say the listing is being fetched again")
    assert json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["state"] == "syncing"
    server.release("posts")
    assert done.wait(20) == 0
    assert status_warnings(setup) == []
    assert setup.cache_doc("posts")["records"] == POSTS
    assert unconditional_gets(server)                            # fetched whole: the validators went with the file


def test_a_failed_refetch_after_damage_does_not_claim_a_cached_copy_though_local_changes_were_written(server, setup, daemons):
    d = start(setup, server, daemons, Writable="yes")
    overwrite(setup.cache_file("posts"), b'"Post 1"', b'"Post X"')
    server.fault("posts", kind="status", status=503, method="GET")
    assert syncctl(setup, "get", "posts", "1").returncode == 1
    d.wait_log("posts: cache file was damaged")
    d.wait_log("posts: refresh failed, no cached copy yet")
    # A local change rewrites the cache file with just itself: still no copy of the server's listing.
    assert put(setup, {"id": 13, "title": "Kept"}).returncode == 0
    assert syncctl(setup, "refresh", "posts").returncode == 0
    d.wait_log("posts: refresh failed, no cached copy yet", count=2)
    assert "serving the cached copy" not in d.output(), d.output()
    assert setup.cache_doc("posts")["records"] == [{"id": 13, "title": "Kept"}]

def test_list_of_a_source_never_fetched_says_no_listing_is_held(server, setup, daemons):
    setup.write_main(PATIENT)
    server.fault("posts", kind="status", status=503)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: refresh failed")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    r = syncctl(setup, "list", "posts", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == [], r.stdout
    assert r.stderr == NO_LISTING + "nothing listed (see 'syncctl status')\n", r.stderr
    r = syncctl(setup, "get", "posts", "1")
    assert r.returncode == 1
    assert r.stderr == ("syncctl: no record with ID 1 in source posts; syncd holds no listing of posts yet: its first refresh "
                        "has not succeeded, or its cache file was damaged and the listing is being fetched again "
                        "(see 'syncctl status')\n"), r.stderr
    # A listing that is empty on the server is a listing: no warning.
    server.clear_fault("posts")
    server.set_records("posts", [])
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    r = syncctl(setup, "list", "posts", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == [] and r.stderr == "", r.stderr
    r = syncctl(setup, "get", "posts", "1")
    assert (r.returncode, r.stderr) == (1, "syncctl: no record with ID 1 in source posts\n"), r.stderr

def test_start_without_a_cache_file_does_not_claim_to_serve_cached_data(server, setup, daemons):
    d = start(setup, server, daemons)
    assert "Started: account default, 1 source, no cached data yet (no cache file for posts: fetching its listing)" in d.output()
    assert d.stop() == 0
    d = daemons(setup)
    d.wait_log("posts: not modified")
    assert "Started: account default, 1 source, serving cached data\n" in d.output(), d.output()
    assert d.stop() == 0
    setup.cache_file("posts").unlink()
    server.fault("posts", kind="status", status=503)
    d = daemons(setup)
    d.wait_log("posts: refresh failed")
    assert "Started: account default, 1 source, no cached data yet (no cache file for posts: fetching its listing)" \
        in d.output(), d.output()
    assert "serving cached data" not in d.output() and "serving the cached copy" not in d.output(), d.output()


def _idle(setup):
    r = syncctl(setup, "status", "--json")
    return r.returncode == 0 and json.loads(r.stdout)["sources"][0]["state"] != "syncing"
