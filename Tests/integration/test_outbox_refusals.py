"""A refusal concerns its record only (docs/local-changes.md, "Failures"): a 4xx on the check before a push or on
the push itself parks that one change and the source goes on; SendClientID=no lets the server assign IDs; the
status counts what the cache file holds; the messages about a parked change say what is true. The test server's
records and request log are the evidence."""
import json
import urllib.error
import urllib.request

from conftest import wait_for
from test_outbox import V1, outbox_entries, put, start, writable
from test_outbox_delivery import source_status
from test_syncctl import syncctl


def parked(setup):
    return [e for e in outbox_entries(setup) if e["state"] == "parked"]


def test_a_405_on_the_check_before_a_push_parks_that_change_and_the_source_goes_on(server, setup, daemons):
    # VersionField= makes syncd GET the item URL before a PUT; this server's item URLs take writes only.
    writable(setup, server)
    server.set_records("posts", server.records("posts") + [{"id": 3, "title": "Post 3", "version": V1}])
    d = start(setup, daemons)
    server.set_records("posts", server.records("posts") + [{"id": 4, "title": "New on the server", "version": V1}])
    answer = '{"detail":"Method \\"GET\\" not allowed."}'
    server.fault("posts", kind="status", status=405, method="GET", itemOnly=True, body=answer, contentType="application/json")
    assert put(setup, {"id": 1, "title": "edited", "version": V1}).returncode == 0
    assert put(setup, {"id": "new-1", "title": "queued behind"}).returncode == 0
    wait_for(lambda: parked(setup), what="the update to be parked")
    wait_for(lambda: any(r["id"] == "new-1" for r in server.records("posts")), what="the create queued behind it")
    [entry] = parked(setup)
    assert (entry["id"], entry["operation"], entry["lastStatus"]) == ("1", "update", 405)
    assert entry["lastError"] == f"HTTP 405 from GET {server.url('posts')}/1 (the check before the PUT): {answer}"
    shown = syncctl(setup, "outbox").stdout
    assert f"HTTP 405 from GET {server.url('posts')}/1 (the check before the PUT)" in shown and "not allowed." in shown
    # The server: the create arrived once, the update never went out.
    assert [(q["method"], q["path"]) for q in server.requests() if q["method"] in ("POST", "PUT")] == [("POST", "/posts")]
    assert [r["title"] for r in server.records("posts") if r["id"] in (1, "new-1")] == ["Post 1", "queued behind"]
    # The source is not backing off: a refresh succeeds and the listing's new record is in the cache file.
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    doc = setup.cache_doc("posts")
    assert {"id": 4, "title": "New on the server", "version": V1} in doc["records"]
    assert next(r for r in doc["records"] if r["id"] == 1)["title"] == "edited"
    assert doc["parked"] == [1]
    assert source_status(setup)["lastError"] is None
    assert (f"posts: the server refused the update of 1, parked it: HTTP 405 from GET {server.url('posts')}/1 "
            "(the check before the PUT)") in d.output()


def post(server, record):
    request = urllib.request.Request(server.url("posts"), data=json.dumps(record).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_send_client_id_no_lets_a_server_that_rejects_unknown_fields_assign_the_id(server, setup, daemons):
    writable(setup, server, version=False, SendClientID="no")
    server.options("posts", serverIds=True, knownMembers=["title", "author"])
    # This server refuses a create that carries an ID.
    assert post(server, {"id": "c1", "title": "with an ID"}) == (400, '{"error": "Unknown field [id]"}')
    start(setup, daemons)
    server.clear_requests()
    r = put(setup, {"title": "Assigned by the server"})
    assert r.returncode == 0, r.stderr
    client_id = r.stdout.strip().split()[-1]
    wait_for(lambda: outbox_entries(setup) == [], what="the create to be delivered and confirmed")
    assert [json.loads(q["body"]) for q in server.requests() if q["method"] == "POST"] == [{"title": "Assigned by the server"}]
    assert [r for r in server.records("posts") if r["title"] == "Assigned by the server"] == \
        [{"title": "Assigned by the server", "id": 1001}]
    # The outbox empties in the state database first; the cache file is published after it.
    wait_for(lambda: {"title": "Assigned by the server", "id": 1001} in setup.cache_doc("posts")["records"],
             what="the cache file to carry the server's ID")
    doc = setup.cache_doc("posts")
    assert client_id not in [r["id"] for r in doc["records"]] and doc["pending"] == []


def test_a_parked_create_is_counted_and_its_drop_removes_it_from_the_local_view(server, setup, daemons):
    writable(setup, server, version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=422, method="POST", body='{"error":"title too short"}')
    assert put(setup, {"id": "short", "title": "x"}).returncode == 0
    wait_for(lambda: setup.cache_doc("posts")["parked"] == ["short"], what="the cache file to name the parked create")
    assert [r["id"] for r in setup.cache_doc("posts")["records"]] == [1, 2, "short"]
    # The status counts the records of the cache file: the parked create is one of them.
    wait_for(lambda: source_status(setup)["records"] == 3, what="the status to count the cache file's 3 records")
    [entry] = parked(setup)
    r = syncctl(setup, "outbox", "--drop", str(entry["seq"]))
    assert r.returncode == 0
    assert r.stdout == (f"Dropped outbox entry {entry['seq']}; its record is removed from the local view, "
                        "as the server's listing does not have it.\n")
    assert [r["id"] for r in setup.cache_doc("posts")["records"]] == [1, 2]
    wait_for(lambda: source_status(setup)["records"] == 2, what="the status to count the cache file's 2 records")
    assert outbox_entries(setup) == [] and [r["id"] for r in server.records("posts")] == [1, 2]


def test_the_hint_after_a_404_never_suggests_the_item_url_that_failed(server, setup, daemons):
    # URL= ends in "/": the item URL is derived as …/posts/{id}/, and the server answers 404 there.
    writable(setup, server, version=False)
    setup.add_source("posts", server.url("posts") + "/", Writable="yes")
    start(setup, daemons)
    server.fault("posts", kind="status", status=404, method="PUT")
    assert put(setup, {"id": 2, "title": "edited"}).returncode == 0
    wait_for(lambda: parked(setup), what="the change to be parked")
    base = server.url("posts")
    assert parked(setup)[0]["lastError"] == (
        f"HTTP 404 from {base}/2/, yet the server's listing has record 2: the item URL {base}/{{id}}/ is likely wrong; "
        f"set ItemURL= to the server's URL of one record (perhaps ItemURL={base}/{{id}}), then 'syncctl outbox --retry'")
    assert next(r for r in server.records("posts") if r["id"] == 2)["title"] == "Post 2"
    assert next(r for r in setup.cache_doc("posts")["records"] if r["id"] == 2)["title"] == "edited"


def test_a_403_on_a_push_stops_the_push_keeps_the_change_queued_and_the_listing_is_pulled(server, setup, daemons):
    # A token that may read but not write: the credential's trouble, not the record's; nothing is parked.
    writable(setup, server, version=False)
    start(setup, daemons)
    server.set_records("posts", server.records("posts") + [{"id": 3, "title": "New on the server"}])
    server.fault("posts", kind="status", status=403, method="PUT", body='{"detail":"read-only token"}')
    assert put(setup, {"id": 1, "title": "edited"}).returncode == 0
    wait_for(lambda: "check the credentials" in (source_status(setup)["lastError"] or ""), what="the refresh to fail")
    assert source_status(setup)["lastError"] == (
        f"pushing update of 1: HTTP 403 from PUT {server.url('posts')}/1: check the credentials (BearerTokenCredential=) "
        "(the listing was pulled; the change stays queued and is retried)")
    [entry] = outbox_entries(setup)
    assert (entry["state"], entry["lastStatus"]) == ("queued", 403)
    doc = setup.cache_doc("posts")
    assert {"id": 3, "title": "New on the server"} in doc["records"] and doc["parked"] == []
    assert next(r for r in server.records("posts") if r["id"] == 1)["title"] == "Post 1"
    # The credential fixed: the same change goes out, no person had to retry it.
    server.clear_fault("posts")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert next(r for r in server.records("posts") if r["id"] == 1)["title"] == "edited"


def test_send_client_id_no_a_lost_create_is_recognised_by_its_fields_and_not_sent_twice(server, setup, daemons):
    # A gateway's 502 after the server stored the create: the listing is searched by every member sent but the ID.
    writable(setup, server, version=False, SendClientID="no", TimeoutSec="2s", LostCreateWaitSec="3s")
    server.options("posts", serverIds=True, knownMembers=["title", "author"])
    d = start(setup, daemons)
    server.fault("posts", kind="store-then-status", status=502, method="POST")
    r = put(setup, {"title": "through a proxy", "author": "Ann"})
    assert r.returncode == 0, r.stderr
    client_id = r.stdout.strip().split()[-1]
    d.wait_log(f"posts: the create of {client_id}, whose answer was lost, is on the server as 1001; adopted that ID", timeout=15)
    wait_for(lambda: outbox_entries(setup) == [], timeout=15, what="the outbox to empty")
    assert [json.loads(q["body"]) for q in server.requests() if q["method"] == "POST"] == [{"title": "through a proxy", "author": "Ann"}]
    assert [r for r in server.records("posts") if r["title"] == "through a proxy"] == \
        [{"title": "through a proxy", "author": "Ann", "id": 1001}]
    # The outbox empties in the state database first; the cache file is published after it (republish).
    wait_for(lambda: [rec["id"] for rec in setup.cache_doc("posts")["records"]] == [1, 2, 1001],
             timeout=15, what="the cache file to carry the adopted ID")
