"""A create whose answer was lost while the server was still working on it (docs/local-changes.md, "No
duplicate creates"): the server holds the POST for seconds and commits it only after syncd gave up on the
answer (TimeoutSec=) or was stopped. A listing read meanwhile does not show the record, yet sending it again
would create it twice: syncd waits LostCreateWaitSec= from the request's start before it may. The test
server's own records and request log are the evidence; its `writeDelay` holds each write, then applies it, and
a "hold" fault keeps a POST until the test releases it (no race with the test's own steps)."""
import json
import subprocess
import time

import pytest

from conftest import BIN, wait_for
from test_syncctl import syncctl


def put(setup, record):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "notes", "-"],
                          input=json.dumps(record), capture_output=True, text=True, timeout=30)


def notes_source(setup, server, **keys):
    """The server assigns its own integer IDs (like Django REST Framework): only the listing can tell
    whether a create whose answer was lost is there."""
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n"
                     "[Network]\nDebounceSec=200ms\nReachabilityIntervalSec=0\n")
    server.set_records("notes", [{"id": 1, "title": "existing"}])
    server.options("notes", serverIds=True)
    setup.add_source("notes", server.url("notes"), Writable="yes", **keys)


def start(setup, daemons):
    d = daemons(setup)
    d.wait_log("notes: synced 1 record")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def posts(server):
    return [q for q in server.requests("/notes") if q["method"] == "POST"]


def listings_since_the_post(server):
    """The listings the server was asked for after the (first) POST arrived."""
    requests = server.requests("/notes")
    first = next(i for i, q in enumerate(requests) if q["method"] == "POST")
    return [q for q in requests[first:] if q["method"] == "GET"]


def titled(server, title):
    return [r for r in server.records("notes") if r.get("title") == title]


def outbox(setup):
    return json.loads(syncctl(setup, "outbox", "--json").stdout)


# Against the release binaries too: the rest of this file's rules are the engine's, checked in-process by
# Tests/SyncEngineTests (LostCreateTests) with a scripted server and a manual clock.
@pytest.mark.release_binaries
def test_a_create_still_running_when_its_answer_timed_out_is_adopted_not_sent_twice(server, setup, daemons):
    # Released once two listings lacked it, well before LostCreateWaitSec= ends (the next listing then adopts it).
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", LostCreateWaitSec="4s")
    d = start(setup, daemons)
    server.fault("notes", kind="hold", method="POST", times=1)  # the server works on it until released; syncd waits 1 s
    r = put(setup, {"title": "slow"})
    assert r.returncode == 0, r.stderr
    client_id = r.stdout.strip().split()[-1]
    d.wait_log("notes: the create of %s, whose answer was lost, is not in the listing yet" % client_id, timeout=15)
    # Listings keep coming (the source retries) while the server still works on the POST; none sends it again.
    wait_for(lambda: len(listings_since_the_post(server)) >= 2, timeout=15, what="several listings that lack it")
    assert len(posts(server)) == 1 and not titled(server, "slow")
    server.release("notes")
    wait_for(lambda: titled(server, "slow"), timeout=15, what="the server to store the create")
    d.wait_log("whose answer was lost, is on the server as", timeout=15)
    wait_for(lambda: outbox(setup) == [], timeout=15, what="the outbox to empty")
    stored = titled(server, "slow")
    assert len(stored) == 1 and stored[0]["client_id"] == client_id
    assert len(posts(server)) == 1
    # The outbox empties first; the cache file is rewritten right after.
    doc = wait_for(lambda: (lambda doc: doc if doc["pending"] == [] else None)(setup.cache_doc("notes")),
                   what="the settled create in the cache file")
    assert [rec["id"] for rec in doc["records"] if rec.get("title") == "slow"] == [stored[0]["id"]]
    assert "sending it again" not in d.output()


@pytest.mark.release_binaries
def test_a_create_cut_off_by_restarts_while_the_server_works_on_it_is_created_once(server, setup, daemons):
    # No ClientIDField=: found by every member it sent, among the records that are new in the listing.
    # Released after the restarts, before LostCreateWaitSec= ends (the next listing then adopts it).
    notes_source(setup, server, TimeoutSec="2s", LostCreateWaitSec="7s")
    d = start(setup, daemons)
    server.fault("notes", kind="hold", method="POST", times=1)  # the server works on it until released
    assert put(setup, {"title": "restarted", "body": "kept"}).returncode == 0
    wait_for(lambda: posts(server), timeout=10, what="the POST to arrive")
    assert d.stop() == 0                                         # SIGTERM while the POST is out
    d = daemons(setup)                                           # restarted while the server still holds it
    d.wait_log("is not in the listing yet", timeout=10)
    for _ in range(2):                                           # and again: the retry state it kept is restored
        assert d.stop() == 0
        d = daemons(setup)
        wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert len(posts(server)) == 1 and not titled(server, "restarted")
    server.release("notes")                                      # the server commits it only now
    wait_for(lambda: titled(server, "restarted"), timeout=15, what="the server to store the create")
    d.wait_log("whose answer was lost, is on the server as", timeout=15)
    wait_for(lambda: outbox(setup) == [], timeout=15, what="the outbox to empty")
    assert len(titled(server, "restarted")) == 1
    assert len(posts(server)) == 1
    assert [rec["body"] for rec in setup.cache_doc("notes")["records"] if rec.get("title") == "restarted"] == ["kept"]


def test_a_create_the_server_never_stored_is_sent_again_only_after_lost_create_wait_sec(server, setup, daemons):
    notes_source(setup, server, TimeoutSec="2s", LostCreateWaitSec="3s")
    d = start(setup, daemons)
    server.fault("notes", kind="drop", method="POST", times=1)   # closed unanswered, nothing stored
    assert put(setup, {"title": "dropped"}).returncode == 0
    wait_for(lambda: len(posts(server)) == 2, timeout=20, what="the create to be sent again")
    first, second = posts(server)
    # It waited: a listing read in between lacked it and did not send it ("not in the listing yet"); a later one
    # that lacked it did. How long it waits is the rule LostCreateWaitTests checks with a manual clock; measured
    # here it would compare the server's clock with the daemon's start of the request, and fail by milliseconds
    # on a busy machine.
    between = [q for q in server.requests("/notes") if q["method"] == "GET" and first["time"] < q["time"] < second["time"]]
    assert len(between) >= 2
    log = d.output()
    assert -1 < log.find("whose answer was lost, is not in the listing yet") < log.find("is not in the listing; sending it again"), log
    wait_for(lambda: titled(server, "dropped"), timeout=10, what="the re-sent create to be stored")
    wait_for(lambda: outbox(setup) == [], timeout=15, what="the outbox to empty")
    assert len(titled(server, "dropped")) == 1
    assert len(posts(server)) == 2
    assert d.output().count("is not in the listing; sending it again") == 1


def test_records_sharing_one_client_id_are_kept_and_reported(server, setup, daemons):
    notes_source(setup, server, ClientIDField="client_id")
    twins = [{"id": 1, "title": "existing"}, {"id": 2, "title": "a", "client_id": "c-7"},
             {"id": 3, "title": "b", "client_id": "x"}, {"id": 4, "title": "a", "client_id": "c-7"}]
    server.set_records("notes", twins)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    expected = ('notes: the server took one create more than once: 2 records carry client_id="c-7" (2, 4); '
                "syncd keeps every record the server lists: remove the extra ones on the server")
    assert expected in r.stderr
    assert setup.cache_doc("notes")["records"] == twins            # nothing dropped or merged
    # The running daemon shows it in the status until a listing no longer has it.
    daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    status = json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]
    assert expected.removeprefix("notes: ") in status["warnings"]
    server.set_records("notes", twins[:3])                          # the extra one removed on the server
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    status = json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]
    assert status["warnings"] == []
    assert setup.cache_doc("notes")["records"] == twins[:3]


@pytest.mark.parametrize("status", [500, 502, 503, 504, 524])
def test_a_gateway_error_after_the_server_stored_the_create_is_not_sent_twice(server, setup, daemons, status):
    # A 5xx from a reverse proxy, a mesh or a CDN says nothing about whether the server behind it took the POST.
    notes_source(setup, server, TimeoutSec="2s", ClientIDField="client_id", LostCreateWaitSec="3s")
    d = start(setup, daemons)
    server.fault("notes", kind="store-then-status", status=status, method="POST")
    r = put(setup, {"title": "through a proxy"})
    assert r.returncode == 0, r.stderr
    client_id = r.stdout.strip().split()[-1]
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is on the server as 1001; adopted that ID", timeout=15)
    wait_for(lambda: outbox(setup) == [], timeout=15, what="the outbox to empty")
    assert [r["client_id"] for r in titled(server, "through a proxy")] == [client_id]
    assert len(posts(server)) == 1
    # The outbox empties when the change is settled; the cache file follows once the adopted ID is written into it.
    wait_for(lambda: [rec["id"] for rec in setup.cache_doc("notes")["records"]] == [1, 1001], timeout=15,
             what="the cache file to show the server's ID 1001")


def test_a_create_the_server_stores_differently_is_sent_at_most_twice_then_parked(server, setup, daemons):
    # No ClientIDField=, and a server that drops a member it does not know and answers after syncd gave up:
    # no listing ever shows a record equal to what was sent.
    notes_source(setup, server, TimeoutSec="1s", LostCreateWaitSec="2s")
    d = start(setup, daemons)
    server.options("notes", serverIds=True, writeDelay=2, dropMembers=["colour"])
    assert put(setup, {"title": "reshaped", "colour": "red"}).returncode == 0
    d.wait_log("notes: parked the create of", timeout=30)
    message = outbox(setup)[0]["lastError"]
    assert message.startswith("it was sent again after the outcome of its POST was unknown (no answer, or a 5xx), "
                              "the second outcome was unknown too (timed out after 1.0 seconds (TimeoutSec=) sending POST to ")
    assert "and no listing since shows a record that matches it" in message
    assert "set ClientIDField=" in message and "'syncctl outbox --drop' or '--retry'" in message
    assert outbox(setup)[0]["state"] == "parked"
    # The status counts the parked change once the refresh that parked it has ended.
    wait_for(lambda: "1 parked (see 'syncctl outbox')" in syncctl(setup, "status").stdout, timeout=15,
             what="the parked change in syncctl status")
    # Parked, it is sent no more: two records at most, and a person decides.
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert len(posts(server)) == 2
    assert [r["title"] for r in server.records("notes")] == ["existing", "reshaped", "reshaped"]


def test_outbox_retry_does_not_send_a_waiting_create_blind(server, setup, daemons):
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", LostCreateWaitSec="6s")
    d = start(setup, daemons)
    server.fault("notes", kind="hold", method="POST", times=1)  # the server works on it until released
    r = put(setup, {"title": "patience"})
    client_id = r.stdout.strip().split()[-1]
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is not in the listing yet", timeout=15)
    seq = outbox(setup)[0]["seq"]
    r = syncctl(setup, "outbox", "--retry", str(seq))
    assert r.returncode != 0
    assert (f"entry {seq} is a create whose answer was lost; syncd sends it again only if a listing read once "
            "LostCreateWaitSec= has passed still lacks it (see 'syncctl status')") in r.stderr
    assert outbox(setup)[0]["lastError"] is not None                 # still a lost create, not queued afresh
    server.release("notes")
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is on the server as", timeout=20)
    assert len(titled(server, "patience")) == 1 and len(posts(server)) == 1


def test_a_record_that_carries_an_existing_records_client_id_is_not_adopted_as_that_record(server, setup, daemons):
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", LostCreateWaitSec="3s")
    server.set_records("notes", [{"id": 1, "title": "existing", "client_id": "dup"}])
    d = start(setup, daemons)
    server.fault("notes", kind="hold", method="POST", times=1)  # the server works on it until released
    r = put(setup, {"title": "mine", "client_id": "dup"})            # the record sets the member itself
    client_id = r.stdout.strip().split()[-1]
    # A listing with only record 1 carrying "dup" does not take it for the create.
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is not in the listing yet", timeout=15)
    server.release("notes")
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is on the server as 1001; adopted that ID", timeout=20)
    assert "is on the server as 1;" not in d.output()
    wait_for(lambda: outbox(setup) == [], timeout=15, what="the outbox to empty")
    assert server.records("notes") == [{"id": 1, "title": "existing", "client_id": "dup"},
                                       {"id": 1001, "title": "mine", "client_id": "dup"}]
    # The outbox empties first; the cache file is rewritten with the adopted ID right after.
    wait_for(lambda: [(rec["id"], rec["title"]) for rec in setup.cache_doc("notes")["records"]] == [(1, "existing"), (1001, "mine")],
             what="the cache file to show the server's ID 1001")


def test_a_waiting_create_does_not_hold_back_the_sources_periodic_listings(server, setup, daemons):
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", LostCreateWaitSec="5min")
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Refresh]\nIntervalSec=10s\n"
                     "[Network]\nDebounceSec=200ms\nReachabilityIntervalSec=0\n")
    d = start(setup, daemons)
    server.options("notes", serverIds=True, writeDelay=2)
    r = put(setup, {"title": "soon seen"})
    client_id = r.stdout.strip().split()[-1]
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is not in the listing yet", timeout=15)
    # The server stored it 2 s after it arrived; the next listing (at IntervalSec=, not after 5 min) adopts it.
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is on the server as 1001; adopted that ID", timeout=25)
    assert len(posts(server)) == 1


def test_a_lost_create_is_not_sent_again_while_the_listing_is_incomplete(server, setup, daemons):
    # Pagination=none on a paged listing: each listing is incomplete and fails (the create may be on page 2),
    # so no listing ever counts as lacking the record, not even once LostCreateWaitSec= is over.
    notes_source(setup, server, TimeoutSec="1s", LostCreateWaitSec="2s")
    server.set_records("notes", [{"id": 1, "title": "existing"}, {"id": 2, "title": "on page two already"}])
    server.options("notes", serverIds=True, perPage=1)
    d = daemons(setup)
    incomplete = 'the response has a Link: rel="next" header but Pagination=none: only the first page was received; ' \
                 "set Pagination=link"
    d.wait_log(incomplete)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.options("notes", serverIds=True, writeDelay=2, perPage=1)
    assert put(setup, {"title": "on page two"}).returncode == 0
    wait_for(lambda: outbox(setup)[0]["attempts"] == 1 and outbox(setup)[0]["lastError"], timeout=15,
             what="the create's answer lost")
    d.wait_log(incomplete, count=2)
    time.sleep(2.5)                                                    # LostCreateWaitSec= is over:
    assert syncctl(setup, "refresh", "notes", "--wait").returncode != 0
    status = json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]
    assert status["lastError"] == incomplete
    assert len(posts(server)) == 1 and len(titled(server, "on page two")) == 1
    assert outbox(setup)[0]["state"] == "queued"                       # kept, not dropped, not sent
    assert "sending it again" not in d.output()


def test_a_burst_of_creates_to_a_server_slower_than_the_timeout_ends_with_each_once(server, setup, daemons):
    # Each POST times out (the server answers after 2 s): the push stops there, but the listing is still pulled
    # and adopts what the server stored; such refreshes are retried past MaxAttempts= (3 here), one create each.
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", LostCreateWaitSec="20s")
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\nMaxAttempts=3\n"
                     "[Network]\nDebounceSec=200ms\nReachabilityIntervalSec=0\n")
    d = start(setup, daemons)
    server.options("notes", serverIds=True, writeDelay=2)
    burst = 5
    for n in range(burst):
        assert put(setup, {"title": f"burst {n}"}).returncode == 0
    wait_for(lambda: outbox(setup) == [], timeout=90, what="every create adopted")
    titles = sorted(r["title"] for r in server.records("notes") if r["title"].startswith("burst"))
    assert titles == sorted(f"burst {n}" for n in range(burst))         # each once
    assert len(posts(server)) == burst
    assert "sending it again" not in d.output() and "not retrying until the next trigger" not in d.output()
    assert "until it succeeds (a create waits for the listing, which the server serves)" in d.output()
    assert sorted(r["title"] for r in setup.cache_doc("notes")["records"] if r["title"].startswith("burst")) == titles
