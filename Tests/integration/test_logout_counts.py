"""What the status and `Watch` count around a logout follows the store (docs/syncctl.1.md, "logout";
docs/local-changes.md): puts racing a `logout --discard-pending`, a change dropped by ConflictPolicy=server-wins
while a long listing runs, and the sources a reload brings back after a logout."""
import json
import os
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
            # Large records make each put (stored, then the whole cache file rewritten) take a while, so the
            # logout arrives while puts queued before it are still being stored on the old account.
            results.append(put(setup, {"id": f"r{round_}-{i}", "title": "racing", "text": "x" * 200_000}))
        threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        wait_for(lambda: results, timeout=10, what="the first put's answer")
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


def test_a_put_being_stored_when_logout_comes_is_not_counted_afterwards(server, setup, daemons):
    """The put is caught mid-way (its cache file being rewritten, a temporary file in the folder) when the logout
    arrives: it ends on the old account, after the logout began, and must not bring the old counts back."""
    big = [{"id": i, "title": f"post {i}", "body": "b" * 80} for i in range(1, 60_001)]
    setup.write_main("[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    server.set_records("posts", big)
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup)
    d.wait_log("posts: synced 60000 records", timeout=60)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.fault("posts", kind="status", status=503)          # nothing is pushed meanwhile
    folder = setup.cache / setup.account
    live = subprocess.Popen([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "watch", "--json"],
                            stdout=subprocess.PIPE, text=True)
    assert json.loads(live.stdout.readline())["event"] == "current"     # watching before the put and the logout
    results = []
    t = threading.Thread(target=lambda: results.append(put(setup, {"id": "late", "title": "racing"})))
    t.start()
    wait_for(lambda: any(".tmp-" in name for name in os.listdir(folder)), timeout=10, interval=0.001,
             what="the put rewriting the cache file")
    logout = syncctl(setup, "logout", "--discard-pending")
    t.join()
    assert logout.returncode == 0, logout.stderr
    d.wait_log("Logged out")
    assert stored_counts(setup) == (0, 0)                      # the put went with the old account
    wait_for(lambda: (source_status(setup)["records"], source_status(setup)["pending"]) == (0, 0), timeout=5,
             what="the status to show the empty store")
    live.terminate()
    events = [json.loads(line) for line in live.communicate(timeout=5)[0].splitlines()]
    assert "logout" in [e["event"] for e in events]
    assert (events[-1]["records"], events[-1]["pending"]) == (0, 0)         # the last word is the empty store
    watch = subprocess.Popen([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "watch", "--json"],
                             stdout=subprocess.PIPE, text=True)
    try:
        first = json.loads(watch.stdout.readline())
    finally:
        watch.terminate()
        watch.wait(timeout=5)
    assert (first["event"], first["records"], first["pending"]) == ("current", 0, 0)


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
