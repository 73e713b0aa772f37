"""Incremental pull with sync tokens (syncd.conf(5), "Incremental pull", `# Google sync token`) against the
project's own server in its token mode (Tests/integration/server/syncserver.py, options syncTokens=True): the
listing's last page carries nextSyncToken, ?syncToken=T answers what changed since T (deletions as
{"id": ..., "status": "cancelled"}), both paged with nextPageToken/pageToken, and an expired token answers 410.

The first tests pin the server's own behaviour over plain HTTP, so that tests of syncd against it rest on a
known feed."""
import json
import urllib.error
import urllib.parse
import urllib.request


def get(url):
    """(status, parsed body) of one GET."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def pages(url):
    """Every page of one listing or change set, following nextPageToken as syncd's Pagination=cursor does (the
    token set as pageToken on the first request's URL)."""
    out, next_url = [], url
    while True:
        status, body = get(next_url)
        assert status == 200, (status, body)
        out.append(body)
        if "nextPageToken" not in body:
            return out
        separator = "&" if "?" in url else "?"
        next_url = url + separator + "pageToken=" + urllib.parse.quote(body["nextPageToken"], safe="")


def records(url):
    return [r for page in pages(url) for r in page["items"]]


def test_the_token_server_pages_a_listing_and_gives_its_token_on_the_last_page_only(server):
    server.set_records("events", [{"id": i, "title": f"event {i}"} for i in range(1, 6)])
    server.options("events", syncTokens=True, perPage=2)
    listing = pages(server.url("events") + "?maxResults=2")
    assert [[r["id"] for r in page["items"]] for page in listing] == [[1, 2], [3, 4], [5]]
    assert ["nextSyncToken" in page for page in listing] == [False, False, True]
    assert all("nextPageToken" in page for page in listing[:-1])
    # Five records set at once: the change log counts five changes, and the token is that count.
    assert listing[-1]["nextSyncToken"] == "5"
    assert server.change_log("events")["seq"] == 5


def test_a_sync_token_answers_what_changed_since_with_deletions_cancelled_paged_and_a_new_token(server):
    server.set_records("events", [{"id": i, "title": f"event {i}"} for i in range(1, 6)])
    server.options("events", syncTokens=True, perPage=2)
    token = pages(server.url("events"))[-1]["nextSyncToken"]
    status, nothing = get(server.url("events") + "?syncToken=" + token)
    assert (status, nothing) == (200, {"items": [], "nextSyncToken": token})
    # Setting the collection anew is diffed into the change log: 2 changed, 4 deleted, 6 added, the rest unchanged.
    server.set_records("events", [{"id": 1, "title": "event 1"}, {"id": 2, "title": "moved"}, {"id": 3, "title": "event 3"},
                                  {"id": 5, "title": "event 5"}, {"id": 6, "title": "new"}])
    changes = pages(server.url("events") + "?syncToken=" + token)
    assert [page["items"] for page in changes] == [[{"id": 2, "title": "moved"}, {"id": 6, "title": "new"}],
                                                   [{"id": 4, "status": "cancelled"}]]
    assert "nextSyncToken" not in changes[0] and changes[-1]["nextSyncToken"] == "8"
    # A record changed twice comes once, in the place of its last change; the new token answers only that.
    server.set_records("events", [{"id": 1, "title": "again"}, {"id": 2, "title": "moved"}, {"id": 3, "title": "event 3"},
                                  {"id": 5, "title": "event 5"}, {"id": 6, "title": "newer"}])
    assert records(server.url("events") + "?syncToken=8") == [{"id": 1, "title": "again"}, {"id": 6, "title": "newer"}]
    assert records(server.url("events") + "?syncToken=" + token) == [
        {"id": 2, "title": "moved"}, {"id": 4, "status": "cancelled"}, {"id": 1, "title": "again"}, {"id": 6, "title": "newer"}]


def test_an_expired_token_answers_410_and_a_full_listing_gives_a_fresh_one(server):
    server.set_records("events", [{"id": "a"}, {"id": "b"}])
    server.options("events", syncTokens=True)
    old = pages(server.url("events"))[-1]["nextSyncToken"]
    server.set_records("events", [{"id": "a"}, {"id": "c"}])
    server.expire_sync_tokens("events")
    status, body = get(server.url("events") + "?syncToken=" + old)
    assert status == 410 and body["error"]["code"] == 410 and body["error"]["errors"][0]["reason"] == "fullSyncRequired"
    fresh = pages(server.url("events"))
    assert fresh == [{"items": [{"id": "a"}, {"id": "c"}], "nextSyncToken": "4"}]
    # Tokens from the expiry on still work; a token that is no number, or one never issued, is a 400.
    assert get(server.url("events") + "?syncToken=4") == (200, {"items": [], "nextSyncToken": "4"})
    assert get(server.url("events") + "?syncToken=x")[0] == 400
    assert get(server.url("events") + "?syncToken=5")[0] == 400
    assert server.change_log("events") == {"seq": 4, "expiredBefore": 4, "log": [[1, "a"], [2, "b"], [3, "c"], [4, "b"]]}
