"""What the status and `Watch` count around a logout follows the store (docs/syncctl.1.md, "logout";
docs/local-changes.md): puts racing a `logout --discard-pending`, a change dropped by ConflictPolicy=server-wins
while a long listing runs, and the sources a reload brings back after a logout."""
import json
import subprocess
import threading

from conftest import BIN, POSTS, wait_for
from test_outbox import V1, V2, put, start, writable
from test_syncctl import syncctl


def source_status(setup, name="posts"):
    return next(s for s in json.loads(syncctl(setup, "status", "--json").stdout)["sources"] if s["name"] == name)


def stored_counts(setup):
    """(records, records with undelivered changes) as the store holds them, read by syncctl list and outbox
    (which read the state database, not the daemon's status)."""
    listed = syncctl(setup, "list", "posts", "--json")
    assert listed.returncode == 0, listed.stderr
    outbox = json.loads(syncctl(setup, "outbox", "--json").stdout)
    pending = {str(e["id"]) for e in outbox if e["state"] in ("queued", "sent")}
    return (len(json.loads(listed.stdout)), len(pending))


def test_after_logout_racing_puts_the_status_shows_what_the_store_holds(server, setup, daemons):
    writable(setup, server)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503)         # nothing is pushed: every put stays pending
    for round_ in range(3):
        results = []
        def one(i):
            results.append(put(setup, {"id": f"r{round_}-{i}", "title": "racing"}))
        threads = [threading.Thread(target=one, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        logout = syncctl(setup, "logout", "--discard-pending")
        for t in threads:
            t.join()
        assert logout.returncode == 0, logout.stderr
        d.wait_log("Logged out", count=round_ + 1)
        # Whatever the puts met (the old account, erased, or the new one), the status counts what the store holds.
        def agrees():
            s = source_status(setup)
            return (s["records"], s["pending"]) == stored_counts(setup)
        wait_for(agrees, timeout=5, what=f"status to agree with the store (round {round_})")
        records, pending = stored_counts(setup)
        assert records == pending                              # the old listing is gone: only new puts remain
        assert pending <= len([r for r in results if r.returncode == 0])


def test_pending_follows_the_outbox_while_a_long_listing_runs(server, setup, daemons):
    writable(setup, server, policy="server-wins")
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": 1, "title": "local edit", "version": V1}).returncode == 0
    wait_for(lambda: source_status(setup)["pending"] == 1, what="1 pending")
    # Someone else changed record 1; the listing will take 6 s to come.
    server.set_records("posts", [{"id": 1, "title": "server edit", "version": V2}, dict(POSTS[1], version=V1)])
    server.options("posts", delay=6)
    server.clear_fault("posts")
    d.wait_log("dropped the local update (ConflictPolicy=server-wins)", timeout=10)
    wait_for(lambda: source_status(setup)["pending"] == 0, timeout=2, what="pending to drop with the outbox")
    assert source_status(setup)["state"] == "syncing"         # the listing is still being served
    r = syncctl(setup, "logout")                               # nothing undelivered: no --discard-pending needed
    assert r.returncode == 0, r.stderr
    assert [e for e in json.loads(syncctl(setup, "outbox", "--json").stdout)] == []


def test_reload_after_logout_refreshes_the_sources_at_once(server, setup, daemons):
    writable(setup, server)
    d = start(setup, daemons)
    assert syncctl(setup, "logout").returncode == 0
    d.wait_log("Logged out")
    assert not setup.cache_file("posts").exists()
    server.clear_requests()
    assert syncctl(setup, "reload").returncode == 0
    # Refreshed at once (the interval is 15 min): the server sees the listing asked for, the cache is back.
    wait_for(lambda: [q for q in server.requests("/posts") if q["method"] == "GET"], timeout=5, what="a listing request")
    wait_for(lambda: setup.cache_file("posts").exists(), timeout=5, what="the cache file")
    assert [r["id"] for r in setup.cache_doc("posts")["records"]] == [1, 2]
    assert source_status(setup)["records"] == 2
