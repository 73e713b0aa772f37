"""Local changes (docs/local-changes.md) against the test server's json-server-like API:
durable outbox, push before pull, ordering, parking, retries, conflicts under each policy, crashes, full disk."""
import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import BIN, POSTS, fill_filesystem, wait_for
from test_syncctl import syncctl

V1, V2 = "2026-11-29T10:00:00Z", "2026-11-29T11:00:00Z"


def writable(setup, server, policy="server-wins", version=True, records=None, **extra):
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    server.set_records("posts", records if records is not None else [dict(p, version=V1) for p in POSTS])
    keys = {"Writable": "yes", "ConflictPolicy": policy, **extra}
    if version:
        keys["VersionField"] = "version"
    setup.add_source("posts", server.url("posts"), **keys)


def start(setup, daemons):
    d = daemons(setup)
    d.wait_log("posts: synced")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def put(setup, record):
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                       input=json.dumps(record), capture_output=True, text=True, timeout=30)
    return r


def writes(server):
    return [(r["method"], r["path"]) for r in server.requests() if r["method"] in ("POST", "PUT", "DELETE")]


def outbox_entries(setup):
    return json.loads(syncctl(setup, "outbox", "--json").stdout)


def test_put_is_visible_at_once_and_pushed(server, setup, daemons):
    writable(setup, server)
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)          # the server is "down"
    r = put(setup, {"title": "Offline note"})
    assert r.returncode == 0, r.stderr
    new_id = r.stdout.strip().split()[-1]
    doc = setup.cache_doc("posts")
    assert doc["pending"] == [new_id]
    assert doc["records"][-1] == {"id": new_id, "title": "Offline note"}
    assert len(new_id) == 36 and new_id.count("-") == 4        # a UUID string
    server.clear_fault("posts")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert writes(server).count(("POST", "/posts")) == 1
    assert any(r["id"] == new_id for r in server.records("posts"))
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], what="pending to empty")
    assert json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["pending"] == 0


def test_offline_put_survives_sigkill_and_reaches_the_server_exactly_once(server, setup, daemons):
    writable(setup, server)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": "note-1", "title": "Written offline"}).returncode == 0
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    server.clear_fault("posts")
    server.clear_requests()
    d2 = daemons(setup)
    d2.wait_log("posts: pushed create of note-1")
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], timeout=15, what="pending to empty")
    assert writes(server) == [("POST", "/posts")]
    assert [r for r in server.records("posts") if r["id"] == "note-1"] == [{"id": "note-1", "title": "Written offline"}]


def test_a_lost_answer_never_creates_twice(server, setup, daemons):
    writable(setup, server)
    d = start(setup, daemons)
    server.fault("posts", kind="lose-answer", method="POST")
    assert put(setup, {"id": "once", "title": "x"}).returncode == 0
    d.wait_log("posts: the create of once, whose answer was lost, is on the server under its ID", timeout=15)
    assert [r["id"] for r in server.records("posts")].count("once") == 1
    assert writes(server).count(("POST", "/posts")) == 1
    post = next(r for r in server.requests() if r["method"] == "POST")
    assert post["headers"]["idempotency-key"]


def test_changes_to_one_record_coalesce_in_order(server, setup, daemons):
    writable(setup, server, version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": "n", "title": "first"}).returncode == 0
    assert put(setup, {"id": "n", "title": "second"}).returncode == 0     # create + update = create
    assert put(setup, {"id": 1, "title": "Post 1 edited"}).returncode == 0
    assert syncctl(setup, "delete", "posts", "2").returncode == 0
    assert put(setup, {"id": "gone", "title": "never sent"}).returncode == 0
    assert syncctl(setup, "delete", "posts", "gone").returncode == 0       # create + delete, never sent = nothing
    doc = setup.cache_doc("posts")
    assert [r["id"] for r in doc["records"]] == [1, "n"]
    assert sorted(map(str, doc["pending"])) == sorted(["1", "2", "n"])
    server.clear_fault("posts")
    server.clear_requests()
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert sorted(writes(server)) == sorted([("POST", "/posts"), ("PUT", "/posts/1"), ("DELETE", "/posts/2")])
    post = next(r for r in server.requests() if r["method"] == "POST")
    assert json.loads(post["body"]) == {"id": "n", "title": "second"}
    assert {r["id"] for r in server.records("posts")} == {1, "n"}


def test_a_422_parks_one_change_while_another_goes_through(server, setup, daemons):
    writable(setup, server, version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=422, body='{"error":"title too short"}', bodyContains="bad", method="POST")
    assert put(setup, {"id": "bad", "title": "bad"}).returncode == 0
    assert put(setup, {"id": "good", "title": "fine"}).returncode == 0
    wait_for(lambda: any(r["id"] == "good" for r in server.records("posts")), what="the good change")
    entries = outbox_entries(setup)
    parked = [e for e in entries if e["id"] == "bad"]
    assert parked and parked[0]["state"] == "parked" and parked[0]["lastStatus"] == 422
    assert "title too short" in parked[0]["lastError"]
    out = syncctl(setup, "outbox").stdout
    assert "bad" in out and "HTTP 422 from POST" in out and "HTTP 422: HTTP 422" not in out
    doc = setup.cache_doc("posts")
    assert "bad" in doc["pending"] and any(r["id"] == "bad" for r in doc["records"])
    # A person acts: retry (the server now accepts it) or drop.
    server.clear_fault("posts")
    r = syncctl(setup, "outbox", "--retry", str(parked[0]["seq"]))
    assert r.returncode == 0
    assert r.stdout == f"Queued outbox entry {parked[0]['seq']} again; it is pushed at the next refresh.\n"
    wait_for(lambda: any(r["id"] == "bad" for r in server.records("posts")), what="the retried change")


def test_drop_a_parked_change(server, setup, daemons):
    writable(setup, server, version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=400, method="PUT")
    assert put(setup, {"id": 1, "title": "rejected"}).returncode == 0
    wait_for(lambda: any(e["state"] == "parked" for e in outbox_entries(setup)), what="a parked change")
    seq = outbox_entries(setup)[0]["seq"]
    r = syncctl(setup, "outbox", "--drop", str(seq))
    assert r.returncode == 0
    assert r.stdout == f"Dropped outbox entry {seq}; the cache shows the server's version of its record again.\n"
    assert outbox_entries(setup) == []
    assert setup.cache_doc("posts")["records"][0]["title"] == "Post 1"
    assert syncctl(setup, "outbox", "--drop", "999").returncode == 1


def test_a_503_during_push_is_retried_with_backoff(server, setup, daemons):
    # A change of a record (a create's 503 leaves its outcome unknown: test_lost_creates.py).
    writable(setup, server, version=False)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503, method="PUT", times=2)
    assert put(setup, {"id": 1, "title": "retry me"}).returncode == 0
    d.wait_log("posts: pushed update of 1", timeout=20)
    assert writes(server).count(("PUT", "/posts/1")) == 3
    assert "retrying in" in d.output()


def test_a_500_on_one_record_blocks_neither_the_others_nor_the_pull(server, setup, daemons):
    # A 500 to a create leaves its outcome unknown: looked for in the listing, sent again after 5 s.
    writable(setup, server, version=False, TimeoutSec="2s", LostCreateWaitSec="5s")
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=500, method="POST")   # creates fail, updates go through
    server.clear_requests()
    assert put(setup, {"id": "c1", "title": "new, refused for now"}).returncode == 0
    assert put(setup, {"id": 2, "title": "changed"}).returncode == 0
    d.wait_log("posts: pushed update of 2")
    # The refresh goes on to pull, then counts as failed with the reason.
    def last_error():
        return json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["lastError"] or ""
    wait_for(lambda: "HTTP 500" in last_error(), what="the refresh to fail")
    assert "pushing create of c1" in last_error() and "the listing was pulled" in last_error()
    assert server.records("posts")[1]["title"] == "changed"
    log = [(r["method"], r["path"].split("?")[0]) for r in server.requests()]
    assert ("GET", "/posts") in log[log.index(("PUT", "/posts/2")):]
    assert "the other records' changes go on" in d.output()
    # Nothing is lost: the create stays queued with the reason, the cache shows it, and it is retried. (Each
    # retry clears the reason while its request is out, so the test looks between two attempts.)
    def c1():
        return next(e for e in outbox_entries(setup) if e["id"] == "c1")
    wait_for(lambda: c1()["state"] == "queued" and c1()["lastStatus"] == 500, what="the create queued with its HTTP 500")
    doc = setup.cache_doc("posts")
    assert "c1" in doc["pending"] and any(r["id"] == "c1" for r in doc["records"])
    server.clear_fault("posts")
    wait_for(lambda: any(r["id"] == "c1" for r in server.records("posts")), timeout=20, what="the retried create")
    assert writes(server).count(("PUT", "/posts/2")) == 1


def test_a_503_or_three_failures_in_a_row_stop_the_push(server, setup, daemons):
    writable(setup, server, version=False)
    # No retry in the background: the refreshes counted are the ones the test starts (a retry started before the
    # server's answer changed, and joined by 'refresh --wait', would stop at its first 503).
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503, method="POST")   # the server is down for writes
    server.clear_requests()
    for i in range(5):
        assert put(setup, {"id": f"n{i}", "title": "new"}).returncode == 0
    d.wait_log("pushing create of n", timeout=10)
    d.wait_log("refresh failed", timeout=10)
    time.sleep(0.5)        # past the debounce of the last put: any refresh it started has begun
    wait_for(lambda: json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["state"] != "syncing",
             what="no refresh running")
    # Each refresh asks once, not once per change: a 503 concerns the server (and the pull is skipped).
    failed = d.output().count("refresh failed")
    posts = writes(server).count(("POST", "/posts"))
    assert 1 <= posts <= failed, (posts, failed)
    assert not any(r["method"] == "GET" and r["path"].split("?")[0] == "/posts" for r in server.requests())
    server.fault("posts", kind="status", status=500, method="POST")   # failing alike, record after record
    server.clear_requests()
    stopped_before = d.output().count("3 changes in a row failed, stopping the push")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 1
    # The refresh stops after three of the five.
    stops = d.output().count("3 changes in a row failed, stopping the push") - stopped_before
    posts = writes(server).count(("POST", "/posts"))
    assert (stops, posts) == (1, 3)
    assert len(outbox_entries(setup)) == 5                               # nothing lost


def test_server_assigned_ids_are_mapped(server, setup, daemons):
    writable(setup, server, version=False)
    server.options("posts", serverIds=True)
    d = start(setup, daemons)
    # The listing lags behind the write for a while: the cache shows the server's ID, typed as the server wrote it.
    server.fault("posts", kind="body", body=json.dumps([dict(p, version=V1) for p in POSTS]), method="GET")
    assert put(setup, {"id": "tmp", "title": "numbered by the server"}).returncode == 0
    d.wait_log("the server gave tmp the ID 1001")
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [1001], what="the mapped ID in pending")
    server.clear_fault("posts")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], what="pending to empty")
    titles = {r["id"]: r["title"] for r in setup.cache_doc("posts")["records"]}
    assert titles[1001] == "numbered by the server" and "tmp" not in titles


def make_conflict(setup, server, daemons, policy, server_version=V2):
    writable(setup, server, policy=policy)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": 1, "title": "local edit", "version": V1}).returncode == 0
    # Meanwhile someone else changed record 1 on the server.
    server.set_records("posts", [{"id": 1, "title": "server edit", "version": server_version}, dict(POSTS[1], version=V1)])
    server.clear_fault("posts")
    server.clear_requests()
    return d


def test_conflict_server_wins_drops_the_local_change(server, setup, daemons):
    d = make_conflict(setup, server, daemons, "server-wins")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert ("PUT", "/posts/1") not in writes(server)
    assert "dropped the local update (ConflictPolicy=server-wins)" in d.output()
    assert setup.cache_doc("posts")["records"][0]["title"] == "server edit"
    assert outbox_entries(setup) == []


def test_conflict_client_wins_pushes_anyway(server, setup, daemons):
    make_conflict(setup, server, daemons, "client-wins")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert ("PUT", "/posts/1") in writes(server)
    assert server.records("posts")[0]["title"] == "local edit"


@pytest.mark.parametrize("server_version,local_wins", [("2026-01-01T00:00:00Z", True), ("2099-01-01T00:00:00Z", False)])
def test_conflict_last_write_wins_compares_times(server, setup, daemons, server_version, local_wins):
    make_conflict(setup, server, daemons, "last-write-wins", server_version=server_version)
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert (("PUT", "/posts/1") in writes(server)) == local_wins
    assert server.records("posts")[0]["title"] == ("local edit" if local_wins else "server edit")


@pytest.mark.parametrize("keep", ["local", "remote"])
def test_conflict_manual_keeps_both_until_resolved(server, setup, daemons, keep):
    make_conflict(setup, server, daemons, "manual")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    doc = setup.cache_doc("posts")
    assert doc["conflicts"] == [1]                      # IDs as the records write them
    assert doc["records"][0]["title"] == "local edit"
    conflicts = json.loads(syncctl(setup, "conflicts", "--json").stdout)
    assert conflicts[0]["local"]["title"] == "local edit" and conflicts[0]["remote"]["title"] == "server edit"
    assert conflicts[0]["remoteVersion"] == V2
    side_by_side = syncctl(setup, "conflicts").stdout
    title_row = next(l for l in side_by_side.splitlines() if "title" in l)
    assert title_row.startswith("* title") and '"local edit"' in title_row and '"server edit"' in title_row
    assert json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["conflicts"] == 1
    r = syncctl(setup, "resolve", "posts", "1", "--keep", keep)
    assert r.returncode == 0
    assert r.stdout == ("Resolved 1 of posts keeping the local version; it is pushed at the next refresh.\n" if keep == "local"
                        else "Resolved 1 of posts keeping the server's version; the local change is dropped.\n")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    expected = "local edit" if keep == "local" else "server edit"
    assert server.records("posts")[0]["title"] == expected
    wait_for(lambda: setup.cache_doc("posts")["conflicts"] == [], what="the conflict to clear")
    assert setup.cache_doc("posts")["records"][0]["title"] == expected


def test_resolving_a_record_not_in_conflict_points_to_conflicts(server, setup, daemons):
    writable(setup, server, policy="manual")
    start(setup, daemons)
    before = setup.cache_file("posts").read_bytes()
    r = syncctl(setup, "resolve", "posts", "1", "--keep", "local")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "syncctl: record \"1\" of \"posts\" is not in conflict; 'syncctl conflicts' lists the records that are\n", r.stderr
    assert setup.cache_file("posts").read_bytes() == before and outbox_entries(setup) == []


def test_409_from_the_server_is_a_conflict(server, setup, daemons):
    writable(setup, server, policy="server-wins", version=False)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=409, method="PUT", body='{"error":"stale"}')
    assert put(setup, {"id": 2, "title": "mine"}).returncode == 0
    d.wait_log("conflict on 2 (HTTP 409")
    assert outbox_entries(setup) == []
    # The refresh drops the change from the outbox, then rewrites the cache file.
    wait_for(lambda: setup.cache_doc("posts")["records"][1]["title"] == "Post 2", what="the server's version in the cache file")


def test_client_wins_pushes_again_after_a_409(server, setup, daemons):
    writable(setup, server, policy="client-wins", version=False)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=409, method="PUT", body='{"error":"stale"}', times=1)
    assert put(setup, {"id": 2, "title": "mine"}).returncode == 0
    wait_for(lambda: server.records("posts")[1]["title"] == "mine", what="the forced push")
    assert writes(server).count(("PUT", "/posts/2")) == 2
    assert "conflict on 2 (HTTP 409" in d.output() and "pushing the local version (ConflictPolicy=client-wins)" in d.output()
    wait_for(lambda: outbox_entries(setup) == [], what="the outbox to empty")


def test_client_wins_parks_what_the_server_refuses_twice(server, setup, daemons):
    writable(setup, server, policy="client-wins", version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=409, method="PUT", body='{"error":"locked"}')
    assert put(setup, {"id": 2, "title": "mine"}).returncode == 0
    wait_for(lambda: any(e["state"] == "parked" for e in outbox_entries(setup)), what="the parked change")
    entry = outbox_entries(setup)[0]
    assert entry["lastStatus"] == 409 and "locked" in entry["lastError"]
    assert writes(server).count(("PUT", "/posts/2")) == 2        # one forced retry, no loop
    doc = setup.cache_doc("posts")
    assert doc["records"][1]["title"] == "mine" and doc["pending"] == [2]   # the local version is kept


@pytest.mark.parametrize("server_version,local_wins", [(V1, True), ("2099-01-01T00:00:00Z", False)])
def test_last_write_wins_on_a_412(server, setup, daemons, server_version, local_wins):
    # The version check passes, then the server refuses the If-Match: the policy decides.
    writable(setup, server, policy="last-write-wins", records=[dict(p, version=server_version) for p in POSTS])
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=412, method="PUT", body='{"error":"precondition failed"}', times=1)
    assert put(setup, {"id": 2, "title": "mine", "version": server_version}).returncode == 0
    d.wait_log("conflict on 2 (HTTP 412")
    if local_wins:
        wait_for(lambda: server.records("posts")[1]["title"] == "mine", what="the forced push")
        assert writes(server).count(("PUT", "/posts/2")) == 2
    else:
        d.wait_log("dropped the local change (ConflictPolicy=last-write-wins)")
        assert writes(server).count(("PUT", "/posts/2")) == 1
        wait_for(lambda: setup.cache_doc("posts")["records"][1]["title"] == "Post 2", what="the server's version")
    wait_for(lambda: outbox_entries(setup) == [], what="the outbox to empty")


def test_put_on_a_read_only_source_is_refused(server, setup, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    start(setup, daemons)
    r = put(setup, {"id": 3})
    assert r.returncode == 1
    assert "read-only" in r.stderr and "Writable=yes" in r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS


def test_logout_with_pending_changes_refuses_unless_discarding(server, setup, daemons):
    writable(setup, server)
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": "p", "title": "unsent"}).returncode == 0
    r = syncctl(setup, "logout")
    assert r.returncode == 1
    assert "1" in r.stderr and "pending" in r.stderr.lower() or "not pushed" in r.stderr
    assert setup.cache_file("posts").exists()
    r = syncctl(setup, "logout", "--discard-pending")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Logged out of account default: erased the cache and state of 1 source (3 cached records), "
                        "and the local changes of 1 record not confirmed by the server\n"), r.stdout
    assert not setup.cache_file("posts").exists()


def test_logout_counts_only_changes_not_yet_pushed(server, setup, daemons):
    writable(setup, server, version=False)
    d = start(setup, daemons)
    # The server's listings lag behind its writes: the pushed change stays unconfirmed (still "pending").
    server.fault("posts", kind="body", body=json.dumps([dict(p, version=V1) for p in POSTS]), method="GET")
    assert put(setup, {"id": "sent", "title": "delivered"}).returncode == 0
    d.wait_log("posts: pushed create of sent")
    server.stop()                                                   # then the server goes away
    assert put(setup, {"id": "held", "title": "not delivered"}).returncode == 0
    wait_for(lambda: any(e["id"] == "held" and e["attempts"] > 0 for e in outbox_entries(setup)), what="the failed push")
    assert sorted(setup.cache_doc("posts")["pending"]) == ["held", "sent"]
    r = syncctl(setup, "logout")
    assert r.returncode == 1
    assert "1 local change" in r.stderr, r.stderr                  # the delivered one is not counted
    assert setup.cache_file("posts").exists()
    assert {e["id"] for e in outbox_entries(setup)} == {"held", "sent"}


@pytest.fixture
def small_state(setup):
    folder = setup.state / setup.account
    folder.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(folder)], check=True)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def test_full_disk_during_put_fails_clearly_and_loses_nothing(server, setup, daemons, small_state):
    writable(setup, server, version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": "keep-me", "title": "queued before the disk filled"}).returncode == 0
    filler = small_state / "filler"
    fill_filesystem(filler)
    r = put(setup, {"id": "too-much", "title": "x" * 200_000})
    assert r.returncode == 1
    assert "full" in r.stderr.lower()
    assert "nothing was queued" in r.stderr
    filler.unlink()
    ids = [e["id"] for e in outbox_entries(setup)]
    assert ids == ["keep-me"]
    assert "keep-me" in setup.cache_doc("posts")["pending"]
    with sqlite3.connect(setup.db()) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.release_binaries
def test_a_full_state_folder_is_retried_past_max_attempts_with_advice_and_recovers_by_itself(
        server, setup, daemons, small_state):
    # The state database's file system is full: a local failure, not the server's (syncd(8) GUARANTEES 8).
    writable(setup, server, version=False)
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=500ms\nMaxAttempts=2\n"
                     "[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503, method="PUT")
    assert put(setup, {"id": 1, "title": "queued before the disk filled"}).returncode == 0
    wait_for(lambda: any(e["attempts"] > 0 for e in outbox_entries(setup)), what="the failed push")
    many = [dict(p, version=V1) for p in POSTS] + [{"id": i, "title": f"Post {i}", "body": "x" * 200} for i in range(3, 3000)]
    server.set_records("posts", many)
    filler = fill_filesystem(small_state / "filler")
    server.clear_fault("posts")
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 1
    advice = (f"the file system of the state folder {small_state} is full: free some space in {small_state}, then run "
              "`syncctl refresh posts` (the daemon also retries by itself, every MaxDelaySec= at most, until the write "
              "succeeds; queued local changes stay queued)")
    assert "database or disk is full" in r.stderr and advice in r.stderr, r.stderr
    # More failures than MaxAttempts=, and still retrying, never resting until the next trigger.
    d.wait_log(advice, count=4)
    assert "not retrying until the next trigger" not in d.output()
    assert "until it succeeds (a local failure, not the server's)" in d.output()
    assert [(e["id"], e["state"]) for e in outbox_entries(setup)] == [("1", "queued")]      # nothing lost
    # A retry may have sent the change before a write found the disk full (marking it sent fits in the log's free
    # space): the server may hold it already; the entry stays queued until the outcome is stored, and is sent again.
    # Space again: the next retry pushes the change and stores the listing, with no command from anyone.
    filler.unlink()
    wait_for(lambda: server.records("posts")[0]["title"] == "queued before the disk filled", what="the queued change delivered")
    d.wait_log("posts: synced 2999 records")
    doc = setup.cache_doc("posts")
    assert doc["records"][0]["title"] == "queued before the disk filled" and len(doc["records"]) == 2999
    with sqlite3.connect(setup.db()) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.release_binaries
def test_a_server_taking_writes_slowly_holds_a_refresh_no_longer_than_listing_timeout_and_keeps_the_rest_queued(
        server, setup, daemons):
    # Each write is answered within TimeoutSec=, but slowly: the push stops at the refresh's deadline.
    records = [{"id": i, "title": f"Post {i}"} for i in range(1, 11)]
    writable(setup, server, version=False, records=records, ListingTimeoutSec="2s")
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503, method="PUT")        # held back while they are queued
    for i in range(1, 9):
        assert put(setup, {"id": i, "title": f"edited {i}"}).returncode == 0
    wait_for(lambda: any(e["attempts"] > 0 for e in outbox_entries(setup)), what="the failed push")
    server.options("posts", writeDelay=0.8)
    server.clear_fault("posts")
    d.wait_log("posts: the push stopped at ListingTimeoutSec=2.0 seconds, the deadline of a whole refresh: ")
    line = next(l for l in d.output().splitlines() if "the push stopped at ListingTimeoutSec=" in l)
    left = int(line.split("refresh: ")[1].split(" change")[0])
    assert 1 <= left < 8, line
    assert line.endswith("not pushed stay queued and go out at the next refresh; "
                         "raise ListingTimeoutSec= if the server is just slow") or left == 1, line
    # Nothing lost: once the server is quick again, every change arrives.
    server.options("posts", writeDelay=0)
    wait_for(lambda: all(p["title"] == f"edited {p['id']}" for p in server.records("posts") if p["id"] <= 8),
             timeout=30, what="every queued change delivered")
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], what="the changes confirmed by the listing")


@pytest.mark.release_binaries
def test_a_put_larger_than_one_control_call_says_so_and_queues_nothing(server, setup, daemons):
    writable(setup, server, version=False)
    start(setup, daemons)
    before = setup.cache_file("posts").read_bytes()
    r = put(setup, {"id": "big", "title": "x" * 1_100_000})
    assert r.returncode == 1
    assert r.stderr == ("syncctl: the record is 1100023 bytes as JSON, but one call to syncd carries at most 1 MiB "
                        "(1048576 bytes, a limit that cannot be raised): make the record smaller than 1 MiB, or change "
                        "a record this large on the server itself; nothing was queued\n"), r.stderr
    assert outbox_entries(setup) == []
    assert setup.cache_file("posts").read_bytes() == before


def test_a_stale_listing_after_a_push_neither_drops_a_create_nor_resurrects_a_delete(server, setup, daemons):
    writable(setup, server, version=False)
    d = start(setup, daemons)
    stale = json.dumps([dict(p, version=V1) for p in POSTS])
    # The next two listings the server sends are from before the push (e.g. a lagging replica).
    server.fault("posts", kind="body", body=stale, method="GET", times=2)
    assert put(setup, {"id": "fresh", "title": "just created"}).returncode == 0
    assert syncctl(setup, "delete", "posts", "2").returncode == 0
    d.wait_log("posts: pushed delete of 2")
    wait_for(lambda: ("DELETE", "/posts/2") in writes(server) and ("POST", "/posts") in writes(server), what="both pushes")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0      # another stale listing
    ids = [r["id"] for r in setup.cache_doc("posts")["records"]]
    assert "fresh" in ids and 2 not in ids, ids
    # Once the server's listing shows both changes, they are confirmed and no longer pending.
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    doc = setup.cache_doc("posts")
    assert [r["id"] for r in doc["records"]] == [1, "fresh"] and doc["pending"] == []


def test_pushes_carry_if_match_and_a_412_is_a_conflict(server, setup, daemons):
    writable(setup, server, policy="manual")
    d = start(setup, daemons)
    assert put(setup, {"id": 1, "title": "guarded", "version": V1}).returncode == 0
    wait_for(lambda: server.records("posts")[0]["title"] == "guarded", what="the guarded update")
    log = server.requests()
    get = next(i for i, r in enumerate(log) if r["method"] == "GET" and r["path"] == "/posts/1")
    push = next(i for i, r in enumerate(log) if r["method"] == "PUT")
    assert get < push                                   # the version check precedes the push
    assert log[push]["headers"]["if-match"].startswith('"')
    # The server refuses the precondition (someone changed the record between syncd's check and its push).
    server.fault("posts", kind="status", status=412, method="PUT", body='{"error":"precondition failed"}')
    assert put(setup, {"id": 2, "title": "raced", "version": V1}).returncode == 0
    d.wait_log("conflict on 2 (HTTP 412")
    # The log line comes before the cache file that shows the conflict is published.
    wait_for(lambda: setup.cache_doc("posts")["conflicts"] == [2], what="the conflict in the cache file")


def test_deleting_what_the_server_already_removed_counts_as_done(server, setup, daemons):
    writable(setup, server, version=False)
    d = start(setup, daemons)
    # Removed on the server after the daemon's last listing: the DELETE meets a real 404, the listing agrees.
    server.set_records("posts", [p for p in server.records("posts") if p["id"] != 2])
    assert syncctl(setup, "delete", "posts", "2").returncode == 0
    d.wait_log("posts: delete of 2 already removed on the server (HTTP 404)")
    assert not [e for e in outbox_entries(setup) if e["state"] == "parked"]


def test_a_404_for_a_record_the_listing_has_parks_the_change(server, setup, daemons):
    # The item URL is wrong (here: the server answers 404 though it still lists the record): never dropped.
    writable(setup, server, version=False)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=404, method="PUT")
    assert put(setup, {"id": 1, "title": "edited"}).returncode == 0
    d.wait_log("posts: parked the update of 1: HTTP 404 from " + server.url("posts") + "/1, yet the server's listing has record 1")
    parked = [e for e in outbox_entries(setup) if e["state"] == "parked"]
    assert len(parked) == 1 and "set ItemURL=" in parked[0]["lastError"]
    assert next(r for r in setup.cache_doc("posts")["records"] if r["id"] == 1)["title"] == "edited"
    assert next(r for r in server.records("posts") if r["id"] == 1)["title"] == "Post 1"


def test_a_307_on_a_put_resends_it_with_its_body(server, setup, daemons):
    writable(setup, server, version=False)
    d = start(setup, daemons)
    server.fault("old", kind="redirect", status=307, to="/posts/1")
    setup.add_source("posts", server.url("posts"), Writable="yes", ItemURL=server.url("old") + "?id={id}")
    assert syncctl(setup, "reload").returncode == 0
    assert put(setup, {"id": 1, "title": "moved"}).returncode == 0
    wait_for(lambda: server.records("posts")[0]["title"] == "moved", what="the redirected PUT")
    puts = [r for r in server.requests() if r["method"] == "PUT"]
    assert [r["path"] for r in puts] == ["/old?id=1", "/posts/1"]
    assert json.loads(puts[1]["body"]) == {"id": 1, "title": "moved"}


def test_a_303_on_a_put_parks_it(server, setup, daemons):
    writable(setup, server, version=False)
    d = start(setup, daemons)
    server.fault("posts", kind="redirect", status=303, to="/elsewhere", method="PUT")
    assert put(setup, {"id": 1, "title": "not taken"}).returncode == 0
    d.wait_log("posts: HTTP 303 See Other from PUT " + server.url("posts") + "/1 to /elsewhere: the server did not take the PUT")
    wait_for(lambda: [e["state"] for e in outbox_entries(setup)] == ["parked"], what="the change parked")
    assert server.records("posts")[0]["title"] == "Post 1"
    assert not [r for r in server.requests() if r["path"] == "/elsewhere"]


def test_a_5xx_answer_is_shown_like_a_4xx(server, setup, daemons):
    writable(setup, server, version=False)
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=500, method="PUT", body='{"detail":"database is locked"}')
    assert put(setup, {"id": 1, "title": "later"}).returncode == 0
    wait_for(lambda: any("database is locked" in (e["lastError"] or "") for e in outbox_entries(setup)), what="the 500's answer")
    entry = outbox_entries(setup)[0]
    assert entry["state"] == "queued" and entry["lastStatus"] == 500
    assert entry["lastError"] == f'HTTP 500 from PUT {server.url("posts")}/1: {{"detail":"database is locked"}}'


@pytest.mark.parametrize("envelope,reason", [
    ("", "the server's copy (GET {url}/1) has no \"version\" (VersionField=) in its record, so its version cannot be compared"),
    ("/data", "the answer to GET {url}/1 gives no version to compare: the answer has nothing at RecordEnvelope=/data"),
])
def test_a_server_version_that_cannot_be_read_parks_the_change(server, setup, daemons, envelope, reason):
    # Not a conflict: with server-wins the change would be dropped. It waits, parked, with the reason.
    writable(setup, server, RecordEnvelope=envelope)
    start(setup, daemons)
    before = server.records("posts")
    if not envelope:
        # The listing had version V1; the server's answer to the pre-push GET has none.
        server.fault("posts", kind="body", method="GET", times=1, body=json.dumps(POSTS[0]))
    assert put(setup, {"id": 1, "title": "local edit", "version": V1}).returncode == 0
    wait_for(lambda: [e["state"] for e in outbox_entries(setup)] == ["parked"], what="the change parked")
    entry = outbox_entries(setup)[0]
    assert entry["lastStatus"] == 200
    assert entry["lastError"] == (reason.format(url=server.url("posts"))
                                  + f"; check VersionField= and RecordEnvelope=, then 'syncctl outbox --retry {entry['seq']}'")
    assert writes(server) == [] and server.records("posts") == before
    doc = setup.cache_doc("posts")
    assert doc["records"][0]["title"] == "local edit" and doc["pending"] == [1]


def test_a_412_whose_server_copy_cannot_be_read_parks_the_change(server, setup, daemons):
    # client-wins sends no pre-push GET; the 412 makes syncd read the server's copy, which has no record at /data.
    writable(setup, server, policy="client-wins", RecordEnvelope="/data")
    start(setup, daemons)
    before = server.records("posts")
    server.fault("posts", kind="status", status=412, method="PUT", body='{"error":"precondition failed"}')
    assert put(setup, {"id": 1, "title": "local edit", "version": V1}).returncode == 0
    wait_for(lambda: [e["state"] for e in outbox_entries(setup)] == ["parked"], what="the change parked")
    entry = outbox_entries(setup)[0]
    url = server.url("posts")
    assert entry["lastStatus"] == 412
    assert entry["lastError"] == (f"HTTP 412 from PUT {url}/1, and the answer to GET {url}/1 gives no version to compare: the answer "
                                  f"has nothing at RecordEnvelope=/data; check VersionField= and RecordEnvelope=, then "
                                  f"'syncctl outbox --retry {entry['seq']}'")
    assert writes(server) == [("PUT", "/posts/1")] and server.records("posts") == before
    doc = setup.cache_doc("posts")
    assert doc["records"][0]["title"] == "local edit" and doc["pending"] == [1]
