"""Django REST Framework (a real ModelViewSet + DefaultRouter from build/venv, Tests/integration/drf) as
syncd's server: paged listings, trailing-slash item URLs, 301s from DEBUG=False, a slow create, validation
errors and version conflicts. Every test checks the server's own SQLite database."""
import json
import subprocess

import pytest

from conftest import BIN, wait_for
from realservers import DRF
from recipes import recipe
from test_syncctl import syncctl


@pytest.fixture
def drf(tmp_path):
    servers = []

    def start(**kwargs):
        s = DRF(tmp_path / f"drf{len(servers)}", **kwargs)
        servers.append(s)
        return s
    yield start
    for s in servers:
        s.stop()


def quick_retries(setup):
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")


def notes_source(setup, server, url=None, **keys):
    keys = {"Pagination": "body", "RecordsPath": "/results", "Writable": "yes", **keys}
    setup.add_source("notes", url or server.url(), **keys)


def run(setup, daemons):
    d = daemons(setup)
    d.wait_log("notes: synced", timeout=20)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def slow_server(drf, setup, daemons, **keys):
    """A server with one note whose creates commit at once and answer after 3 s; syncd waits 1 s for them."""
    server = drf(create_delay=3)
    server.insert(1)
    quick_retries(setup)
    notes_source(setup, server, TimeoutSec="1s", **keys)
    return server, run(setup, daemons)


def put(setup, record):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "notes", "-"],
                          input=json.dumps(record), capture_output=True, text=True, timeout=30)


def outbox(setup):
    return json.loads(syncctl(setup, "outbox", "--json").stdout)


def cached(setup):
    return setup.cache_doc("notes")


def test_page_number_pagination_is_followed_to_the_last_page(drf, setup, tmp_path):
    """syncd.conf(5)'s `# Django REST Framework, PageNumberPagination` recipe, as printed but for this machine's
    address and token file (the test project takes any token: the recipe's credential is only carried)."""
    server = drf(page_size=100)
    server.insert(250)
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "notes-token").write_text("t0ken\n")
    (setup.config / "sources.d" / "notes.source").write_text(
        recipe("Django REST Framework, PageNumberPagination", URL=server.url()))
    r = setup.syncd("--once", env={"CREDENTIALS_DIRECTORY": str(credentials)})
    assert r.returncode == 0, r.stderr
    assert [n["id"] for n in cached(setup)["records"]] == [row["id"] for row in server.rows()]
    assert len(cached(setup)["records"]) == 250


def test_without_pagination_a_next_page_makes_the_listing_incomplete_and_keeps_the_cache(drf, setup):
    server = drf(page_size=100)
    server.insert(60)
    setup.add_source("notes", server.url(), RecordsPath="/results")
    assert setup.syncd("--once").returncode == 0                      # one page: the whole collection
    before = setup.cache_file("notes").read_bytes()
    server.insert(190)                                                 # now DRF names a next page
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert ("notes: the response has a next page at /next but Pagination=none: only the first page was received; "
            "set Pagination=body and NextPath=/next") in r.stderr
    assert setup.cache_file("notes").read_bytes() == before
    assert [n["id"] for n in json.loads(before)["records"]] == [row["id"] for row in server.rows()][:60]


def test_limit_offset_pagination_is_followed_with_its_recipe(drf, setup):
    server = drf(page_size=100)
    server.insert(250)
    (setup.config / "sources.d" / "notes.source").write_text(
        recipe("Django REST Framework, LimitOffsetPagination", URL=server.url("/api/offset-notes/?limit=100")))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert cached(setup)["records"] == server.rows()


def test_check_config_shows_the_derived_item_url(drf, setup):
    server = drf()
    notes_source(setup, server)
    r = setup.syncd("--check-config", "--verbose")
    assert r.returncode == 0, r.stderr
    assert f"notes: change: PUT {server.base}/api/notes/{{id}}/ (derived from URL=; set ItemURL= if the server differs)" in r.stdout
    assert f"notes: remove: DELETE {server.base}/api/notes/{{id}}/" in r.stdout
    assert r.stdout.endswith("configuration OK\n")


def test_changes_and_removals_reach_the_trailing_slash_urls(drf, setup, daemons):
    server = drf()
    server.insert(3)
    quick_retries(setup)
    notes_source(setup, server)
    run(setup, daemons)
    assert put(setup, {"id": 2, "title": "edited", "body": "", "version": 1, "client_id": ""}).returncode == 0
    assert syncctl(setup, "delete", "notes", "3").returncode == 0
    assert put(setup, {"id": "new-1", "title": "created"}).returncode == 0
    wait_for(lambda: [(r["id"], r["title"]) for r in server.rows()] == [(1, "note 1"), (2, "edited"), (4, "created")],
             timeout=20, what="the server's rows")
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    assert [r["id"] for r in cached(setup)["records"]] == [1, 2, 4]


def test_301_redirects_from_urls_without_the_slash_resend_the_body(drf, setup, daemons):
    server = drf()
    server.insert(2)
    quick_retries(setup)
    # Django with DEBUG=False answers every method on /api/notes and /api/notes/1 with 301 to the slash URL.
    notes_source(setup, server, url=server.url("/api/notes"), ItemURL=server.base + "/api/notes/{id}")
    d = run(setup, daemons)
    assert put(setup, {"id": 1, "title": "moved", "body": "", "version": 1, "client_id": ""}).returncode == 0
    assert put(setup, {"id": "c", "title": "posted"}).returncode == 0
    wait_for(lambda: [(r["id"], r["title"]) for r in server.rows()] == [(1, "moved"), (2, "note 2"), (3, "posted")],
             timeout=20, what="the server's rows")
    assert "redirected to " + server.base + "/api/notes/1/" in d.output() or "pushed update of 1" in d.output()
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")


def test_a_slow_create_whose_answer_times_out_is_made_exactly_once(drf, setup, daemons):
    server, d = slow_server(drf, setup, daemons)
    assert put(setup, {"id": "slow-1", "title": "slow"}).returncode == 0
    d.wait_log("notes: the create of slow-1, whose answer was lost, is on the server as 2; adopted that ID", timeout=30)
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    # Several more refreshes: still one row.
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert [(r["id"], r["title"]) for r in server.rows()] == [(1, "note 1"), (2, "slow")]
    assert [r["id"] for r in cached(setup)["records"]] == [1, 2]


def test_a_400_is_parked_then_superseded_by_a_corrected_put(drf, setup, daemons):
    server = drf()
    quick_retries(setup)
    notes_source(setup, server, AllowEmpty="yes")
    d = run(setup, daemons)
    assert put(setup, {"id": "draft", "title": "x" * 50}).returncode == 0
    d.wait_log("notes: the server refused the create of draft, parked it: HTTP 400", timeout=20)
    parked = [e for e in outbox(setup) if e["state"] == "parked"]
    assert len(parked) == 1 and "Ensure this field has no more than 40 characters" in parked[0]["lastError"]
    assert server.rows() == []
    # The status follows once the refresh that parked it has ended.
    wait_for(lambda: (lambda s: (s["parked"], s["pending"]))(json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]) == (1, 1),
             what="one parked record, pending as the cache file lists it, in the status")
    assert cached(setup)["parked"] == ["draft"] and cached(setup)["pending"] == ["draft"]
    assert "1 parked (see 'syncctl outbox')" in syncctl(setup, "status").stdout
    assert put(setup, {"id": "draft", "title": "fixed"}).returncode == 0
    wait_for(lambda: [r["title"] for r in server.rows()] == ["fixed"], timeout=20, what="the corrected create")
    d.wait_log("notes: the parked create of draft (outbox")
    entries = wait_for(lambda: [e for e in outbox(setup) if e["state"] != "sent"] == outbox(setup) and outbox(setup),
                       timeout=20, what="the corrected create confirmed by the listing")
    assert [e["state"] for e in entries] == ["parked"]
    assert entries[0]["lastError"].startswith("superseded by a newer change; was: HTTP 400")
    wait_for(lambda: (lambda s: (s["parked"], s["pending"]))(json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]) == (0, 0),
             what="nothing parked or pending in the status")
    # The superseded change is history: the file shows the server's record, nothing pending.
    doc = wait_for(lambda: (lambda doc: doc if doc["pending"] == [] else None)(cached(setup)), what="the settled file")
    assert doc["parked"] == [] and [r["title"] for r in doc["records"]] == ["fixed"], doc["records"]


def edited_on_both_sides(drf, setup, daemons, policy):
    """Note 1 edited on the server (version 2) and locally, against version 1, with ConflictPolicy=`policy`."""
    server = drf()
    server.insert(1)
    quick_retries(setup)
    notes_source(setup, server, VersionField="version", ConflictPolicy=policy)
    d = run(setup, daemons)
    server.execute("UPDATE notes_note SET title = 'server edit', version = 2 WHERE id = 1")
    assert put(setup, {"id": 1, "title": "local edit", "body": "", "version": 1, "client_id": ""}).returncode == 0
    return server, d


def test_a_version_conflict_is_kept_for_the_person_to_resolve(drf, setup, daemons):
    server, _ = edited_on_both_sides(drf, setup, daemons, "manual")
    wait_for(lambda: json.loads(syncctl(setup, "conflicts", "--json").stdout), timeout=20, what="a conflict")
    assert server.rows()[0]["title"] == "server edit"


def test_keep_local_pushes_the_local_version_against_the_servers(drf, setup, daemons):
    """`resolve --keep local` against a server that checks the version in the body (the test app answers 409
    when `version` is not the current one): the change goes out with the server's version and is taken."""
    server, d = edited_on_both_sides(drf, setup, daemons, "manual")
    wait_for(lambda: json.loads(syncctl(setup, "conflicts", "--json").stdout), timeout=20, what="a conflict")
    # The outbox says why the change is held: the server's version, read before the push.
    [held] = outbox(setup)
    assert held["state"] == "conflict"
    assert "the server's version is 2, the change was made against 1" in held["lastError"]
    r = syncctl(setup, "resolve", "notes", "1", "--keep", "local")
    assert r.returncode == 0, r.stderr
    # The cache shows the local version: rebased onto the server's (2) until it is pushed, or, if the push
    # (DebounceSec=300ms) and the listing after it were quicker than this read, the server's record (3).
    assert next(rec for rec in cached(setup)["records"] if rec["id"] == 1) in (
        {"id": 1, "title": "local edit", "body": "", "version": 2, "client_id": ""},
        {"id": 1, "title": "local edit", "body": "", "version": 3, "client_id": ""})
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    wait_for(lambda: server.rows()[0]["title"] == "local edit", timeout=20, what="the local edit on the server")
    assert server.rows()[0]["version"] == 3
    wait_for(lambda: outbox(setup) == [], timeout=20, what="the outbox to empty")
    assert json.loads(syncctl(setup, "conflicts", "--json").stdout) == []
    assert "conflict on 1" in d.output() and d.output().count("conflict on 1 (") == 1


def test_a_409_with_client_wins_pushes_the_local_version_against_the_servers(drf, setup, daemons):
    """client-wins pushes without reading the version first; the 409 that follows names the server's version,
    and the second push carries it, so the local version is taken rather than parked."""
    server, d = edited_on_both_sides(drf, setup, daemons, "client-wins")
    wait_for(lambda: server.rows()[0]["title"] == "local edit", timeout=20, what="the local edit on the server")
    assert server.rows()[0]["version"] == 3
    assert "pushing the local version (ConflictPolicy=client-wins)" in d.output()
    wait_for(lambda: outbox(setup) == [], timeout=20, what="the outbox to empty")
    wait_for(lambda: next(r for r in cached(setup)["records"] if r["id"] == 1)["version"] == 3, timeout=20,
             what="the server's record in the cache")
    assert "parked" not in d.output()


def test_a_404_from_a_wrong_item_url_parks_the_change_naming_it(drf, setup, daemons):
    server = drf()
    server.insert(1)
    quick_retries(setup)
    notes_source(setup, server, ItemURL=server.base + "/api/note/{id}/")
    d = run(setup, daemons)
    assert put(setup, {"id": 1, "title": "edited", "body": "", "version": 1, "client_id": ""}).returncode == 0
    d.wait_log(f"notes: parked the update of 1: HTTP 404 from {server.base}/api/note/1/, yet the server's listing has record 1", timeout=20)
    parked = [e for e in outbox(setup) if e["state"] == "parked"]
    assert len(parked) == 1 and "set ItemURL=" in parked[0]["lastError"]
    assert server.rows()[0]["title"] == "note 1"
    assert next(r for r in cached(setup)["records"] if r["id"] == 1)["title"] == "edited"


def test_a_crash_during_a_create_does_not_make_it_twice(drf, setup, daemons):
    server = drf(create_delay=3)
    server.insert(1)
    quick_retries(setup)
    notes_source(setup, server)
    d = run(setup, daemons)
    assert put(setup, {"id": "crash-1", "title": "during a crash"}).returncode == 0
    # The POST has reached Django (the row is committed, the answer is 3 s away): kill syncd now.
    wait_for(lambda: [r["title"] for r in server.rows()] == ["note 1", "during a crash"], timeout=20, what="the row on the server")
    d.proc.kill()
    d.proc.wait()
    again = daemons(setup)
    again.wait_log("notes: the create of crash-1, whose answer was lost, is on the server as 2; adopted that ID", timeout=30)
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert [(r["id"], r["title"]) for r in server.rows()] == [(1, "note 1"), (2, "during a crash")]
    assert [r["id"] for r in cached(setup)["records"]] == [1, 2]


def test_a_create_django_commits_only_after_syncd_gave_up_and_restarted_is_made_once(drf, setup, daemons):
    """Django works on the POST for 5 s before it commits the row: syncd's answer times out after 1 s, and
    syncd is restarted while the request is still running. Listings read meanwhile lack the row; sending
    the create again then would leave two rows with one client_id (docs/local-changes.md, "No duplicate
    creates"). syncd waits LostCreateWaitSec= from the request's start, finds the row by ClientIDField=."""
    server = drf(commit_delay=5)
    server.insert(1)
    quick_retries(setup)
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", LostCreateWaitSec="9s")
    d = run(setup, daemons)
    assert put(setup, {"title": "committed late", "body": "B"}).returncode == 0
    client_id = cached(setup)["pending"][0]
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is not in the listing yet", timeout=20)
    assert [r["title"] for r in server.rows()] == ["note 1"]
    first_run = d.output()
    assert d.stop() == 0
    again = daemons(setup)
    again.wait_log(f"notes: the create of {client_id}, whose answer was lost, is on the server as 2; adopted that ID", timeout=30)
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert [(r["id"], r["title"], r["client_id"]) for r in server.rows()] == [(1, "note 1", ""), (2, "committed late", client_id)]
    assert [(r["id"], r["title"]) for r in cached(setup)["records"]] == [(1, "note 1"), (2, "committed late")]
    assert "sending it again" not in first_run + again.output()
    assert "took one create more than once" not in again.output()


def test_an_edit_made_while_its_records_create_is_out_reaches_django_with_version_field(drf, setup, daemons):
    """VersionField=version (Django checks it on every update): an edit made while the record's POST is still
    out has no server version to be made against; the version the create got is its base, not a conflict
    that server-wins would drop."""
    server = drf(create_delay=3)                                        # the row commits at once, the answer is 3 s late
    server.insert(1)
    quick_retries(setup)
    notes_source(setup, server, TimeoutSec="1s", ClientIDField="client_id", VersionField="version", LostCreateWaitSec="5s")
    d = run(setup, daemons)
    assert put(setup, {"title": "mine", "body": ""}).returncode == 0
    client_id = cached(setup)["pending"][0]
    wait_for(lambda: len(server.rows()) == 2, timeout=15, what="the POST at Django")
    assert put(setup, {"id": client_id, "title": "mine v2", "body": ""}).returncode == 0
    wait_for(lambda: [r["title"] for r in server.rows()] == ["note 1", "mine v2"], timeout=30, what="the edit at Django")
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    assert [(r["id"], r["title"], r["version"]) for r in server.rows()] == [(1, "note 1", 1), (2, "mine v2", 2)]
    assert "dropped the local update" not in d.output()
    assert [(r["id"], r["title"]) for r in cached(setup)["records"]] == [(1, "note 1"), (2, "mine v2")]


def test_a_lost_create_is_found_by_client_id_field_even_when_the_server_changed_it(drf, setup, daemons):
    server, d = slow_server(drf, setup, daemons, ClientIDField="client_id")
    # The server rewrites what it stores (a trigger in its own database), so only ClientIDField= can find it:
    # an exact match of the fields sent would not, and the create would be sent again.
    server.execute("CREATE TRIGGER stamp AFTER INSERT ON notes_note WHEN NEW.client_id != '' "
                   "BEGIN UPDATE notes_note SET title = NEW.title || ' (checked)' WHERE id = NEW.id; END")
    assert put(setup, {"id": "slow-1", "title": "slow", "client_id": "slow-1"}).returncode == 0
    d.wait_log("notes: the create of slow-1, whose answer was lost, is on the server as 2; adopted that ID", timeout=30)
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert [(r["id"], r["title"], r["client_id"]) for r in server.rows()] == [(1, "note 1", ""), (2, "slow (checked)", "slow-1")]
    doc = cached(setup)
    assert [(r["id"], r["title"]) for r in doc["records"]] == [(1, "note 1"), (2, "slow (checked)")]
    assert doc["pending"] == [] and doc["parked"] == []
    assert [e["state"] for e in outbox(setup) if e["state"] != "sent"] == []


def test_syncd_sends_the_client_id_in_client_id_field_so_a_lost_create_is_found(drf, setup, daemons):
    """A record put without an ID and without the ClientIDField= member (as a user would): syncd puts the
    client's ID there, the server stores it, and the lost create is found by it, never POSTed twice."""
    server, d = slow_server(drf, setup, daemons, ClientIDField="client_id")
    # The server changes what it stores, so an exact match of the fields sent cannot find the record.
    server.execute("CREATE TRIGGER stamp AFTER INSERT ON notes_note "
                   "BEGIN UPDATE notes_note SET title = NEW.title || ' (checked)' WHERE id = NEW.id; END")
    assert put(setup, {"title": "lost create", "body": "L"}).returncode == 0
    client_id = cached(setup)["pending"][0]
    d.wait_log(f"notes: the create of {client_id}, whose answer was lost, is on the server as 2; adopted that ID", timeout=30)
    wait_for(lambda: cached(setup)["pending"] == [], timeout=20, what="nothing pending")
    for _ in range(2):
        assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert [(r["id"], r["title"], r["client_id"]) for r in server.rows()] == \
        [(1, "note 1", ""), (2, "lost create (checked)", client_id)]
    assert [r["id"] for r in cached(setup)["records"]] == [1, 2]


def test_a_lost_create_matching_several_new_records_is_parked_not_sent_again(drf, setup, daemons):
    server, d = slow_server(drf, setup, daemons)
    assert put(setup, {"id": "twin-1", "title": "twin"}).returncode == 0
    # Someone else makes an identical record while syncd's create is on its way (neither is in the listing yet).
    server.execute("INSERT INTO notes_note (title, body, version, client_id) VALUES ('twin', '', 1, '')")
    message = ("the answer to its POST was lost and the listing has several new records with every field it sent (2, 3); "
               "check the server, then 'syncctl outbox --drop' or '--retry'")
    d.wait_log(f"notes: parked the create of twin-1: {message}", timeout=30)
    parked = [e for e in outbox(setup) if e["state"] == "parked"]
    assert len(parked) == 1 and parked[0]["lastError"] == message
    shown = syncctl(setup, "outbox").stdout
    assert "twin-1" in shown and "several new records with every field it sent (2, 3)" in shown
    # More refreshes send nothing more: the server has its record and the other one, no third.
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert syncctl(setup, "refresh", "notes", "--wait").returncode == 0
    assert [(r["id"], r["title"]) for r in server.rows()] == [(1, "note 1"), (2, "twin"), (3, "twin")]
    assert "pushed create of" not in d.output()
    # Nothing lost: the local record stays, pending and parked, for the person to decide.
    doc = cached(setup)
    assert next(r for r in doc["records"] if r["id"] == "twin-1")["title"] == "twin"
    assert doc["pending"] == ["twin-1"] and doc["parked"] == ["twin-1"]
