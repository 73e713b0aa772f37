"""Nobody waits behind one source's refresh (syncd(8), "Concurrency"): while source "slow" pages slowly
and endlessly, a local change of another source returns at once and reaches the server, another source's
refresh completes, a local change of "slow" itself returns without waiting for its paging, and SIGTERM
still stops the daemon mid-listing. The test server's own request log and records are the evidence."""
import json
import signal
import subprocess
import time

from conftest import BIN, POSTS, wait_for
from test_syncctl import syncctl

PAGE_DELAY = 0.3
SLOW = [{"id": i, "title": f"slow {i}"} for i in range(1, 2001)]   # 2000 pages of one record: ~10 minutes


def put(setup, source, record):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", source, "-"],
                          input=json.dumps(record), capture_output=True, text=True, timeout=30)


def slow_pages(server):
    return len(server.requests("/slow"))


def still_paging(server, d, at_least):
    """More pages of "slow" arrive, and its listing has not ended."""
    wait_for(lambda: slow_pages(server) > at_least, timeout=5, what="another page of slow")
    assert "slow: synced" not in d.output()
    assert "slow: refresh failed" not in d.output()


def slow_b_and_c(server, setup, daemons):
    """A daemon with "slow" (paging endlessly, writable), "b" (writable) and "c"; b and c synced on their own
    lanes while slow pages. Local changes are pushed DebounceSec=2s after they are made."""
    setup.write_main("[Network]\nDebounceSec=2s\nReachabilityIntervalSec=0\n")
    server.set_records("slow", SLOW)
    server.options("slow", perPage=1, delay=PAGE_DELAY)
    server.set_records("b", POSTS)
    server.set_records("c", POSTS)
    setup.add_source("slow", server.url("slow"), Pagination="link", Writable="yes", TimeoutSec="5s")
    setup.add_source("b", server.url("b"), Writable="yes")
    setup.add_source("c", server.url("c"))
    d = daemons(setup)
    d.wait_log("b: synced 2 records")
    d.wait_log("c: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def test_nobody_waits_behind_an_endless_listing(server, setup, daemons):
    d = slow_b_and_c(server, setup, daemons)
    pages = slow_pages(server)
    assert pages >= 1
    still_paging(server, d, pages)

    # (a) A put on b returns while slow still pages (its listing lasts minutes), lands in b's cache file and
    # outbox, and is pushed to the server.
    r = put(setup, "b", {"id": 10, "title": "from b"})
    assert r.returncode == 0, r.stderr
    assert "slow: synced" not in d.output()
    doc = setup.cache_doc("b")
    assert doc["pending"] == [10]
    assert doc["records"][-1] == {"id": 10, "title": "from b"}
    # Pushed only after DebounceSec=2s: the change waits in the outbox meanwhile.
    outbox = json.loads(syncctl(setup, "outbox", "--json").stdout)
    assert [(e["source"], e["id"]) for e in outbox] == [("b", "10")]
    wait_for(lambda: any(rec.get("id") == 10 for rec in server.records("b")), timeout=5, what="b's record on the server")
    assert [(q["method"], q["path"]) for q in server.requests("/b") if q["method"] == "POST"] == [("POST", "/b")]
    # A create stays "sent" in the outbox until the listing fetched after the push shows it (docs/local-changes.md, "After the push");
    # that refresh ends a few milliseconds after the server stored the record.
    wait_for(lambda: json.loads(syncctl(setup, "outbox", "--json").stdout) == [], timeout=5,
             what="b's create confirmed by the listing after the push")
    d.wait_log("b: synced 3 records")

    # (b) A refresh of c completes, with the server's new data, while slow still pages.
    server.set_records("c", POSTS + [{"id": 3, "title": "Post 3"}])
    pages = slow_pages(server)
    refresh = syncctl(setup, "refresh", "c", "--wait")
    assert refresh.returncode == 0, refresh.stderr
    assert [rec["id"] for rec in setup.cache_doc("c")["records"]] == [1, 2, 3]
    assert len([q for q in server.requests("/c") if q["method"] == "GET"]) == 2
    still_paging(server, d, pages)

    # (c) A put on slow itself returns while slow pages: its refresh holds no lock while it pages.
    pages = slow_pages(server)
    r = put(setup, "slow", {"id": 9001, "title": "local"})
    assert r.returncode == 0, r.stderr
    assert "slow: synced" not in d.output()
    outbox = json.loads(syncctl(setup, "outbox", "--json").stdout)
    assert [(e["source"], e["id"]) for e in outbox] == [("slow", "9001")]
    assert setup.cache_doc("slow")["pending"] == [9001]
    still_paging(server, d, pages)
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert {s["name"]: s["state"] for s in status["sources"]}["slow"] == "syncing"

    # (d) SIGTERM with slow mid-listing: gone while the listing still had minutes to go.
    d.signal(signal.SIGTERM)
    d.proc.wait(15)
    assert d.proc.returncode == 0
    assert "slow: synced" not in d.output()
    assert not setup.leftovers()


def test_logout_during_an_endless_listing_replaces_every_engine(server, setup, daemons):
    d = slow_b_and_c(server, setup, daemons)
    still_paging(server, d, slow_pages(server))
    # Logout cancels slow's listing, waits for it, closes every engine and erases the account.
    r = syncctl(setup, "logout")
    assert r.returncode == 0, r.stderr
    assert not setup.cache_file("b").exists() and not setup.cache_file("c").exists()
    pages = slow_pages(server)
    time.sleep(3 * PAGE_DELAY)
    assert slow_pages(server) <= pages + 1, "slow kept paging after the logout"
    # The new account's engines work: a refresh on a refresh lane and the local lane's status both see it.
    server.set_records("c", POSTS + [{"id": 3, "title": "Post 3"}])
    assert syncctl(setup, "refresh", "c", "--wait").returncode == 0
    assert [rec["id"] for rec in setup.cache_doc("c")["records"]] == [1, 2, 3]
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert {s["name"]: s["records"] for s in status["sources"]}["c"] == 3
    assert "slow: synced" not in d.output()


def test_a_change_made_while_its_record_is_being_pushed_is_not_lost(server, setup, daemons):
    """The local lane and a refresh lane both touch b's outbox: a put of a record whose previous change is being
    sent returns at once, without waiting for the server (5 s): it is queued after the change in flight, never
    merged into it, and both reach the server in order."""
    setup.write_main("[Network]\nDebounceSec=200ms\nReachabilityIntervalSec=0\n")
    server.set_records("b", POSTS)
    server.options("b", writeDelay=5)
    setup.add_source("b", server.url("b"), Writable="yes")
    d = daemons(setup)
    d.wait_log("b: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    r = put(setup, "b", {"id": 1, "title": "first"})
    assert r.returncode == 0, r.stderr
    wait_for(lambda: [q for q in server.requests("/b/1") if q["method"] == "PUT"], what="the first PUT to arrive")
    r = put(setup, "b", {"id": 1, "title": "second"})
    assert r.returncode == 0, r.stderr
    # It returned before the server applied the first change (5 s after it arrived): it did not wait for the push.
    assert next(rec for rec in server.records("b") if rec["id"] == 1)["title"] == "Post 1"
    server.options("b", writeDelay=0)                        # the first PUT keeps its delay; the second need not wait
    wait_for(lambda: next(rec for rec in server.records("b") if rec["id"] == 1)["title"] == "second", timeout=30,
             what="the second change on the server")
    puts = [json.loads(q["body"])["title"] for q in server.requests("/b/1") if q["method"] == "PUT"]
    assert puts == ["first", "second"]
    wait_for(lambda: setup.cache_doc("b")["pending"] == [], what="the outbox to empty")
    assert setup.cache_doc("b")["records"][0] == {"id": 1, "title": "second"}


def test_a_refresh_lane_that_cannot_open_the_storage_fails_clearly_and_keeps_the_cache(server, setup, daemons):
    """A refresh lane opens the account's storage for each refresh: when it cannot, the refresh fails with the
    reason, the cache file and the database stay as they were, and the next refresh after the repair works."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    before = setup.cache_file("posts").read_bytes()
    account, aside = setup.state / "default", setup.state / "default.aside"
    account.rename(aside)
    account.write_text("not a directory\n")
    server.set_records("posts", POSTS + [{"id": 3, "title": "Post 3"}])
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode != 0
    assert r.stderr == (f"syncctl: refresh of posts failed: Failed to open the account's storage: use {account} as a "
                        "directory: Not a directory\n"), r.stderr
    d.wait_log("posts: refresh failed, serving the cached copy: Failed to open the account's storage: ")
    assert setup.cache_file("posts").read_bytes() == before
    account.unlink()
    aside.rename(account)
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 0, r.stderr
    assert [rec["id"] for rec in setup.cache_doc("posts")["records"]] == [1, 2, 3]


def test_only_sources_a_lane_runs_are_shown_syncing(server, setup, daemons):
    """Six sources due at once, each answering after 2 s: four refresh at a time, and status shows exactly
    those as syncing; the two waiting for a free lane are idle, and then run."""
    setup.write_main("[Network]\nReachabilityIntervalSec=0\n")
    names = [f"s{i}" for i in range(6)]
    for name in names:
        server.set_records(name, POSTS)
        server.options(name, delay=2)
        setup.add_source(name, server.url(name))
    d = daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")

    def states():
        return {s["name"]: s["state"] for s in json.loads(syncctl(setup, "status", "--json").stdout)["sources"]}

    wait_for(lambda: list(states().values()).count("syncing") == 4, timeout=5, what="four sources syncing")
    seen = states()
    running = {name for name, state in seen.items() if state == "syncing"}
    waiting = set(names) - running
    assert len(waiting) == 2 and all(seen[name] == "idle" for name in waiting), seen
    for name in names:
        d.wait_log(f"{name}: synced 2 records")
    assert set(states().values()) == {"idle"}
