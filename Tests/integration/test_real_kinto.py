"""Kinto 26.5 (PyPI, memory backend) as syncd's server, configured with syncd.conf(5)'s `# Kinto` recipe: pages
continued in `Next-Page:`, records wrapped in {"data": ...}, `last_modified` versions and `If-Match` guards
(docs/local-changes.md). Every test checks Kinto's own records, read back through Kinto's API."""
import http.client
import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import BIN, wait_for
from realservers import Kinto
from recipes import recipe
from test_syncctl import syncctl


@pytest.fixture
def kinto(tmp_path):
    server = Kinto(tmp_path / "kinto", page_size=100)
    yield server
    server.stop()


class Relay:
    """A reverse proxy in front of Kinto that records what passes (method, path, status) and can run `before_write`
    once, just before the first PUT or DELETE of a record reaches Kinto: an edit made on the server after
    syncd's pre-push check and before its push. The Host header is kept, so Kinto's Next-Page URLs name the relay."""

    def __init__(self, kinto):
        self.kinto, self.log, self.before_write, self.before_next_page = kinto, [], None, None
        self.queries = []                          # (method, path with its query, response body bytes) of each request
        self.answer_delay = 0                      # seconds the first write's answer is held back after Kinto took it
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command in ("PUT", "DELETE") and relay.before_write:
                    hook, relay.before_write = relay.before_write, None
                    hook()
                if self.command == "GET" and "_token=" in self.path and relay.before_next_page:
                    hook, relay.before_next_page = relay.before_next_page, None
                    # A hook may answer for Kinto: a status (an int) it returns is sent instead of Kinto's page.
                    status = hook()
                    if isinstance(status, int):
                        relay.queries.append((self.command, self.path, 0))
                        try:
                            self.send_response(status)
                            self.send_header("Content-Type", "application/json")
                            self.send_header("Content-Length", "2")
                            self.end_headers()
                            self.wfile.write(b"{}")
                        except (BrokenPipeError, ConnectionResetError):
                            pass                       # the hook killed the client
                        return
                conn = http.client.HTTPConnection("127.0.0.1", relay.kinto.port, timeout=30)
                conn.request(self.command, self.path, body or None, dict(self.headers))
                answer = conn.getresponse()
                data = answer.read()
                relay.log.append((self.command, self.path.split("?")[0], answer.status))
                relay.queries.append((self.command, self.path, len(data)))
                if self.command in ("PUT", "DELETE") and relay.answer_delay:
                    delay, relay.answer_delay = relay.answer_delay, 0
                    time.sleep(delay)
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("connection", "transfer-encoding", "content-length", "server", "date"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_port}/v1/buckets/b/collections/c/records"

    def writes(self):
        return [entry for entry in self.log if entry[0] in ("POST", "PUT", "DELETE")]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def relay(kinto):
    r = Relay(kinto)
    yield r
    r.stop()


def kinto_source(setup, url, name="Kinto", **extra):
    """The `# Kinto` recipe of syncd.conf(5) (or the recipe `name`) with URL= set; `extra` lines are added after it (a
    later key wins)."""
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    text = recipe(name, URL=url) + "".join(f"{k}={v}\n" for k, v in extra.items())
    (setup.config / "sources.d" / "kinto.source").write_text(text)


def start(setup, daemons):
    d = daemons(setup)
    d.wait_log("kinto: synced", timeout=20)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def put(setup, record):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "kinto", "-"],
                          input=json.dumps(record), capture_output=True, text=True, timeout=30)


def outbox(setup):
    return json.loads(syncctl(setup, "outbox", "--json").stdout)


def by_id(records):
    return sorted(records, key=lambda r: r["id"])


def new_id(setup):
    """The ID syncd gave the record created without one (the only one not among the seeded IDs)."""
    ids = [r["id"] for r in setup.cache_doc("kinto")["records"] if r["id"] not in ("keep", "edit", "gone")]
    return ids[0] if ids else None


def test_a_listing_of_three_pages_arrives_complete_through_next_page(kinto, relay, setup):
    kinto.create([{"id": f"r{i:03}", "title": f"record {i}", "n": i} for i in range(250)])
    kinto_source(setup, relay.url())
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    truth = kinto.records()
    assert len(truth) == 250
    assert by_id(setup.cache_doc("kinto")["records"]) == truth
    pages = [entry for entry in relay.log if entry[0] == "GET" and entry[1].endswith("/records")]
    assert len(pages) == 3                                  # 100 + 100 + 50, each named by the page before


def test_a_record_edited_on_kinto_while_the_listing_is_paged_is_not_lost(kinto, relay, setup):
    """The recipe asks for id order: Kinto's own order (newest change first) would move a record edited between
    two pages onto the page already read, and the listing would miss it."""
    kinto.create([{"id": f"r{i:03}", "title": f"record {i}"} for i in range(250)])
    kinto_source(setup, relay.url())
    relay.before_next_page = lambda: kinto.update("r200", {"title": "edited while paging"})
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    records = by_id(setup.cache_doc("kinto")["records"])
    assert len(records) == 250 and records == kinto.records()
    assert next(rec for rec in records if rec["id"] == "r200")["title"] == "edited while paging"


def test_a_create_an_edit_and_a_delete_reach_kinto_exactly_once(kinto, relay, setup, daemons):
    kinto.create([{"id": "keep", "title": "kept"}, {"id": "edit", "title": "before"}, {"id": "gone", "title": "doomed"}])
    kinto_source(setup, relay.url())
    start(setup, daemons)
    edit = next(r for r in setup.cache_doc("kinto")["records"] if r["id"] == "edit")
    assert put(setup, dict(edit, title="after")).returncode == 0
    assert syncctl(setup, "delete", "kinto", "gone").returncode == 0
    created = put(setup, {"title": "new one"})
    assert created.returncode == 0, created.stderr
    wait_for(lambda: [(r["id"], r["title"]) for r in kinto.records()]
             == sorted([("keep", "kept"), ("edit", "after"), (new_id(setup), "new one")]), timeout=20, what="Kinto's records")
    wait_for(lambda: setup.cache_doc("kinto")["pending"] == [], timeout=20, what="nothing pending")
    assert sorted(w[:2] for w in relay.writes()) == sorted([
        ("PUT", "/v1/buckets/b/collections/c/records/edit"), ("DELETE", "/v1/buckets/b/collections/c/records/gone"),
        ("POST", "/v1/buckets/b/collections/c/records")])
    assert all(status in (200, 201) for _, _, status in relay.writes())
    assert by_id(setup.cache_doc("kinto")["records"]) == kinto.records()


@pytest.mark.parametrize("policy", ["server-wins", "client-wins", "manual", "last-write-wins"])
def test_an_edit_made_on_kinto_before_the_push_is_settled_by_the_policy(kinto, relay, setup, daemons, policy):
    kinto.create([{"id": "doc", "title": "original"}])
    kinto_source(setup, relay.url(), ConflictPolicy=policy)
    d = start(setup, daemons)
    record = setup.cache_doc("kinto")["records"][0]
    # Someone edits the record on Kinto after syncd's listing and its pre-push check, before the PUT arrives.
    relay.before_write = lambda: kinto.update("doc", {"title": "server edit"})
    assert put(setup, dict(record, title="local edit")).returncode == 0
    if policy == "client-wins":
        # No check, no If-Match: the local version is written over the server's.
        wait_for(lambda: kinto.record("doc")["title"] == "local edit", timeout=20, what="the local edit on Kinto")
        wait_for(lambda: outbox(setup) == [], timeout=20, what="an empty outbox")
        assert [w[2] for w in relay.writes()] == [200]
        return
    d.wait_log("conflict on doc (HTTP 412 from PUT ", timeout=20)
    assert relay.writes() == [("PUT", "/v1/buckets/b/collections/c/records/doc", 412)]
    if policy == "manual":
        wait_for(lambda: setup.cache_doc("kinto")["conflicts"] == ["doc"], what="the conflict in the cache file")
        conflicts = json.loads(syncctl(setup, "conflicts", "--json").stdout)
        assert conflicts[0]["local"]["title"] == "local edit" and conflicts[0]["remote"]["title"] == "server edit"
        assert setup.cache_doc("kinto")["records"][0]["title"] == "local edit"
    else:
        # server-wins; last-write-wins reads Kinto's last_modified (milliseconds, not an RFC 3339 time) as the server's win.
        wait_for(lambda: outbox(setup) == [], timeout=20, what="the local change dropped")
    assert kinto.records() == [dict(record, title="server edit", last_modified=kinto.record("doc")["last_modified"])]
    assert kinto.record("doc")["last_modified"] > record["last_modified"]


def test_a_change_server_wins_discarded_is_listed_and_restored_onto_kinto(kinto, relay, setup, daemons):
    """No policy drops a change silently (docs/local-changes.md, "Discarded changes"): the local edit Kinto's 412
    discarded under server-wins is listed with both sides, and `outbox --restore` pushes it to Kinto after all."""
    kinto.create([{"id": "doc", "title": "original"}])
    kinto_source(setup, relay.url(), ConflictPolicy="server-wins")
    d = start(setup, daemons)
    record = setup.cache_doc("kinto")["records"][0]
    relay.before_write = lambda: kinto.update("doc", {"title": "server edit"})
    assert put(setup, dict(record, title="local edit")).returncode == 0
    d.wait_log("kept as discarded change", timeout=20)
    assert kinto.record("doc")["title"] == "server edit"
    discarded = json.loads(syncctl(setup, "outbox", "--discarded", "--json").stdout)
    assert [(c["id"], c["operation"], c["record"]["title"], c["server"]["title"]) for c in discarded] == \
        [("doc", "update", "local edit", "server edit")]
    wait_for(lambda: setup.cache_doc("kinto")["records"][0]["title"] == "server edit", timeout=20,
             what="the server's edit in the cache file")
    restored = syncctl(setup, "outbox", "--restore", str(discarded[0]["seq"]))
    assert restored.returncode == 0, restored.stderr
    assert syncctl(setup, "refresh", "kinto", "--wait").returncode == 0
    wait_for(lambda: kinto.record("doc")["title"] == "local edit", timeout=20, what="the restored edit on Kinto")
    assert json.loads(syncctl(setup, "outbox", "--discarded", "--json").stdout) == []
    assert [w[2] for w in relay.writes()] == [412, 200]      # the refused PUT, then the restored one, guarded and taken
    wait_for(lambda: by_id(setup.cache_doc("kinto")["records"]) == kinto.records(), timeout=20, what="cache == Kinto")


def test_an_edit_made_while_the_previous_one_is_pushed_is_not_a_conflict_with_syncds_own_write(kinto, relay, setup, daemons):
    """The second edit is made against the version the listing showed; the server moved on only by syncd's own
    push of the first, so it is pushed (against the version that push produced), not discarded (server-wins)."""
    kinto.create([{"id": "doc", "title": "original"}])
    kinto_source(setup, relay.url())
    start(setup, daemons)
    record = setup.cache_doc("kinto")["records"][0]
    second = {}
    relay.before_write = lambda: second.update(r=put(setup, dict(record, title="second edit")))  # while the first is out
    assert put(setup, dict(record, title="first edit")).returncode == 0
    wait_for(lambda: "r" in second, timeout=20, what="the second put, made while the first PUT was on its way")
    assert second["r"].returncode == 0, second["r"].stderr
    wait_for(lambda: kinto.record("doc")["title"] == "second edit", timeout=20, what="the second edit on Kinto")
    wait_for(lambda: outbox(setup) == [], timeout=20, what="an empty outbox")
    assert json.loads(syncctl(setup, "outbox", "--discarded", "--json").stdout) == []
    assert [w[2] for w in relay.writes()] == [200, 200]
    wait_for(lambda: by_id(setup.cache_doc("kinto")["records"]) == kinto.records(), timeout=20, what="cache == Kinto")


def test_an_edit_whose_answer_was_lost_but_landed_is_settled_not_sent_twice_nor_a_conflict(kinto, relay, setup, daemons):
    """Kinto took the PUT but its answer came after TimeoutSec=: the next push finds the edit on Kinto (a newer
    last_modified, the same content) and settles the change instead of sending it again or discarding it."""
    kinto.create([{"id": "doc", "title": "original"}])
    kinto_source(setup, relay.url(), TimeoutSec="1s")
    d = start(setup, daemons)
    record = setup.cache_doc("kinto")["records"][0]
    relay.answer_delay = 3
    assert put(setup, dict(record, title="edit")).returncode == 0
    d.wait_log("kinto: update of doc is on the server already (an earlier push landed); nothing sent", timeout=30)
    assert kinto.record("doc")["title"] == "edit"
    assert [w[:2] for w in relay.writes()] == [("PUT", "/v1/buckets/b/collections/c/records/doc")]     # sent once
    assert json.loads(syncctl(setup, "outbox", "--discarded", "--json").stdout) == []
    wait_for(lambda: outbox(setup) == [], timeout=20, what="an empty outbox")


def test_without_record_envelope_the_change_is_parked_not_dropped(kinto, relay, setup, daemons):
    # Before RecordEnvelope= a server-wins source dropped every edit against Kinto: its GET of one record answers
    # {"data": {...}}, with no last_modified at the top, which read as a conflict. Now the change waits, parked.
    kinto.create([{"id": "doc", "title": "original"}])
    kinto_source(setup, relay.url(), RecordEnvelope="")
    start(setup, daemons)
    record = setup.cache_doc("kinto")["records"][0]
    assert put(setup, dict(record, title="local edit")).returncode == 0
    wait_for(lambda: [e["state"] for e in outbox(setup)] == ["parked"], timeout=20, what="the change parked")
    entry = outbox(setup)[0]
    assert entry["lastError"] == (f"the server's copy (GET {relay.url()}/doc?_sort=id) has no \"last_modified\" (VersionField=) in its "
                                  f"record, so its version cannot be compared; check VersionField= and RecordEnvelope=, "
                                  f"then 'syncctl outbox --retry {entry['seq']}'")
    assert relay.writes() == []
    assert kinto.records() == [record]
    doc = setup.cache_doc("kinto")
    assert doc["records"][0]["title"] == "local edit" and doc["pending"] == ["doc"]


def test_a_delete_is_guarded_too_and_an_edit_made_meanwhile_survives_it(kinto, relay, setup, daemons):
    kinto.create([{"id": "doc", "title": "original"}])
    kinto_source(setup, relay.url())
    d = start(setup, daemons)
    relay.before_write = lambda: kinto.update("doc", {"title": "server edit"})
    assert syncctl(setup, "delete", "kinto", "doc").returncode == 0
    d.wait_log("conflict on doc (HTTP 412 from DELETE ", timeout=20)
    wait_for(lambda: outbox(setup) == [], timeout=20, what="the removal dropped (ConflictPolicy=server-wins)")
    assert relay.writes() == [("DELETE", "/v1/buckets/b/collections/c/records/doc", 412)]
    assert [(r["id"], r["title"]) for r in kinto.records()] == [("doc", "server edit")]
