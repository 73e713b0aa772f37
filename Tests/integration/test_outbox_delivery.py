"""A source with undelivered changes always has a push scheduled (docs/local-changes.md, "Always a push
scheduled"): a create whose answer was lost is settled by the next listing even when that listing is a 304,
and sent again without any other trigger. The test server's records and request log are the evidence."""
import json

from conftest import wait_for
from test_outbox import outbox_entries, put, start, writable
from test_syncctl import syncctl


def source_status(setup):
    return json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]


def posts_of(server, title):
    return [json.loads(q["body"]) for q in server.requests("/posts")
            if q["method"] == "POST" and json.loads(q["body"]).get("title") == title]


def test_a_lost_create_followed_by_a_304_is_sent_again_without_another_trigger(server, setup, daemons):
    # Sent again only once a listing read 2 s after the first POST began still lacks it (LostCreateWaitSec=).
    writable(setup, server, TimeoutSec="1s", LostCreateWaitSec="2s")
    d = start(setup, daemons)
    # The first POST is dropped unanswered and not stored: the listing stays the same, so the retry's GET is a 304.
    server.fault("posts", kind="drop", method="POST", times=1)
    assert put(setup, {"id": "lost", "title": "Lost answer"}).returncode == 0
    d.wait_log("posts: not modified (HTTP 304)", timeout=15)
    # No manual refresh, no new put: the daemon's own retry must deliver it.
    wait_for(lambda: [r for r in server.records("posts") if r["id"] == "lost"], timeout=15,
             what="the create to reach the server")
    assert [r["id"] for r in server.records("posts")].count("lost") == 1
    assert len(posts_of(server, "Lost answer")) == 2                  # the dropped one, then the re-send
    assert "the create of lost, whose answer was lost, is not in the listing; sending it again" in d.output()
    wait_for(lambda: outbox_entries(setup) == [], timeout=15, what="the outbox to empty")
    # The status follows once the refresh that emptied the outbox has ended (milliseconds later).
    wait_for(lambda: source_status(setup)["pending"] == 0, timeout=5, what="the status to count no pending change")
    assert source_status(setup)["lastError"] is None
    assert "lost" not in setup.cache_doc("posts")["pending"]


def test_a_put_behind_a_create_being_sent_is_logged_as_the_update_it_is_stored_as(server, setup, daemons):
    writable(setup, server)
    d = start(setup, daemons)
    server.options("posts", writeDelay=2)                        # the POST stays out for 2 s
    assert put(setup, {"id": "n", "title": "first"}).returncode == 0
    wait_for(lambda: posts_of(server, "first"), timeout=10, what="the POST to arrive")
    assert put(setup, {"id": "n", "title": "second"}).returncode == 0
    entries = outbox_entries(setup)
    assert [e["operation"] for e in entries if e["id"] == "n"] == ["create", "update"]
    assert d.output().count("posts: queued create of n") == 1
    assert d.output().count("posts: queued update of n") == 1
    wait_for(lambda: [r for r in server.records("posts") if r["id"] == "n" and r["title"] == "second"], timeout=15,
             what="the update to reach the server")
