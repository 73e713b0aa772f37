"""Incremental pull (syncd.conf(5), "Incremental pull") against real servers: Kinto 26.5 with the `# Kinto delta`
recipe (`_since` deltas with tombstones over `Next-Page` pages), Datasette with an `updated` column (an `updated__gt`
filter: no tombstones, so deletions arrive with the full listing `FullResyncIntervalSec=` brings), and the project's
own server for sync tokens (a token on the last page, a change set over several pages, 410 for a token it forgot).
Every test compares the cache file with the server's own records, and counts the requests the server saw. The Kinto
and sync-token tests run against the release binaries too (`make integration-release`)."""
import json
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, wait_for
from realservers import Datasette, Kinto
from recipes import recipe
from test_change_feed import refresh, syncctl
from test_real_kinto import Relay, kinto_source, relay  # noqa: F401 (a fixture: the relay in front of this module's `kinto`)


def by_id(records):
    return sorted(records, key=lambda r: (isinstance(r["id"], str), r["id"]))


@pytest.fixture
def kinto(tmp_path):
    server = Kinto(tmp_path / "kinto", page_size=1000)
    yield server
    server.stop()


def kinto_delta_source(setup, url, **extra):
    kinto_source(setup, url, name="Kinto delta", **extra)


def record_gets(relay):
    """The paths with queries of the GETs of the collection's records (listings and deltas)."""
    return [path for method, path, _ in relay.queries if method == "GET" and path.split("?")[0].endswith("/records")]


@pytest.mark.release_binaries
def test_kinto_changes_arrive_as_deltas_with_tombstones_and_the_checkpoint_survives_a_restart(kinto, relay, setup, daemons):
    kinto.create([{"id": f"r{i:05}", "title": f"record {i}", "n": i} for i in range(5000)])
    kinto_delta_source(setup, relay.url())
    d = daemons(setup)
    d.wait_log("kinto: synced 5000 records", timeout=60)
    d.wait_log("kinto: delta: nothing changed", timeout=30)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    full = record_gets(relay)
    # Five pages, then at once the delta for what changed while they were read (nothing here).
    assert len(full) == 6 and not any("_since" in path for path in full[:5]) and "_since=" in full[5], full
    assert by_id(setup.cache_doc("kinto")["records"]) == kinto.records()

    # On Kinto: two records added, three changed, two deleted.
    relay.queries.clear()
    kinto.create([{"id": "new1", "title": "added"}, {"id": "new2", "title": "added too"}])
    for rid in ("r00010", "r02500", "r04999"):
        kinto.update(rid, {"title": "changed"})
    kinto.delete("r00001")
    kinto.delete("r03000")
    refresh(setup, "kinto")
    gets = record_gets(relay)
    assert len(gets) == 1 and "_since=" in gets[0], gets
    # The delta carried the seven changes, not the listing: a few hundred bytes against a megabyte.
    delta_bytes = relay.queries[-1][2]
    assert delta_bytes < 4096, delta_bytes
    truth = kinto.records()
    assert len(truth) == 5000
    assert by_id(setup.cache_doc("kinto")["records"]) == truth
    assert not any(r["id"] in ("r00001", "r03000") for r in setup.cache_doc("kinto")["records"])
    status = json.loads(syncctl(setup, "status", "kinto", "--json").stdout)
    assert status["delta"] == "watermark" and status["lastDelta"] is not None and status["lastFullListing"] is not None

    # The checkpoint is in the store: after a restart the first refresh asks for changes since it.
    assert d.stop() == 0
    kinto.update("r00020", {"title": "while stopped"})
    relay.queries.clear()
    d = daemons(setup)
    wait_for(lambda: any(r["id"] == "r00020" and r["title"] == "while stopped" for r in setup.cache_doc("kinto")["records"]),
             timeout=30, what="the change made while syncd was stopped")
    gets = record_gets(relay)
    assert len(gets) == 1 and "_since=" in gets[0], gets
    assert by_id(setup.cache_doc("kinto")["records"]) == kinto.records()
    text = syncctl(setup, "status", "kinto").stdout
    assert "Delta: watermark, last delta " in text, text

    # A full listing on demand (to repair a copy that drifted): the whole listing, then the catch-up delta.
    relay.queries.clear()
    r = syncctl(setup, "refresh", "kinto", "--full", "--wait")
    assert r.returncode == 0, r.stderr
    gets = record_gets(relay)
    assert len(gets) == 6 and not any("_since" in path for path in gets[:5]) and "_since=" in gets[5], gets
    assert by_id(setup.cache_doc("kinto")["records"]) == kinto.records()


def test_datasette_rows_changed_arrive_by_updated_filter_and_deletions_with_the_full_resync(tmp_path, setup):
    """No tombstones: a delta brings rows whose `updated` passed the checkpoint; a deleted row stays in the cache
    until the full listing FullResyncIntervalSec= brings (syncd.conf(5), "Incremental pull")."""
    server = Datasette(tmp_path / "datasette", 250, updated=True)
    try:
        # The recipe's URL on this server, in pages of 100 rows: the listing and the deltas are paged.
        text = recipe("Datasette delta", URL=f"{server.base}/data/items.json?_shape=objects&_size=100&_sort_desc=updated")
        (setup.config / "sources.d" / "items.source").write_text(text + "FullResyncIntervalSec=1h\n")
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert by_id(setup.cache_doc("items")["records"]) == server.rows()

        server.execute("UPDATE items SET name = 'renamed', updated = '2026-12-02T00:00:00.000001Z' WHERE id = 7")
        server.execute("INSERT INTO items (id, name, updated) VALUES (900, 'new', '2026-12-02T00:00:00.000002Z')")
        server.execute("DELETE FROM items WHERE id = 100")
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert "items: synced 251 records (a delta of 2 records and 0 tombstones)" in r.stderr, r.stderr
        cached = {row["id"]: row for row in setup.cache_doc("items")["records"]}
        truth = {row["id"]: row for row in server.rows()}
        assert cached[7] == truth[7] and cached[900] == truth[900]
        assert 100 in cached and 100 not in truth              # no tombstone: still held
        assert len(cached) == len(truth) + 1

        # The full resync brings the deletion.
        (setup.config / "sources.d" / "items.source").write_text(text + "FullResyncIntervalSec=1s\n")
        time.sleep(1.1)
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert "fetching the whole listing: FullResyncIntervalSec= passed since the last full listing" in r.stderr, r.stderr
        assert by_id(setup.cache_doc("items")["records"]) == server.rows()
    finally:
        server.stop()


def kinto_history(kinto):
    """Kinto's records and tombstones (`_since=0` lists both), by id, following Next-Page."""
    out, url = {}, kinto.url() + "?_since=0"
    while url:
        status, headers, body = kinto.request("GET", url)
        assert status == 200, (status, body)
        out.update({r["id"]: r for r in body["data"]})
        url = headers.get("Next-Page")
    return out


def published_view(setup):
    """The records of the file syncd publishes: the cache file, or the one a commit left to rename at the next
    start (the store's `pending_rename`, when that file is still there), and the stored checkpoint, read while no
    syncd runs."""
    db = sqlite3.connect(setup.db())
    try:
        pending = db.execute("SELECT pending_rename FROM sources WHERE name = 'kinto'").fetchone()
        row = db.execute("SELECT value FROM delta_checkpoints WHERE source = 'kinto'").fetchone()
    finally:
        db.close()
    path = setup.cache_file("kinto")
    # A kill after the rename but before the mark was cleared leaves the mark naming a file that is gone: the
    # cache file is then the one it became (the store's `settlePendingRename` clears the mark at the next start).
    if pending and pending[0] and (path.parent / pending[0]).exists():
        path = path.parent / pending[0]
    return {r["id"]: r for r in json.loads(path.read_bytes())["records"]}, (int(row[0]) if row else None)


def test_sigkill_at_random_moments_of_delta_refreshes_never_tears_the_file_nor_puts_the_checkpoint_ahead(kinto, setup):
    kinto.create([{"id": f"r{i:04}", "title": f"record {i}"} for i in range(2000)])
    kinto_delta_source(setup, kinto.url())
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    rng = random.Random(26)

    def change_kinto(round):
        for i in rng.sample(range(2000), 30):
            if kinto.record(f"r{i:04}") is not None:
                kinto.update(f"r{i:04}", {"title": f"round {round}"})
        kinto.delete(f"r{round * 7:04}")
        kinto.create([{"id": f"new{round}", "title": "added"}])

    # How long one delta refresh runs here, start to end: the kills fall inside that span.
    change_kinto(0)
    started = time.monotonic()
    assert setup.syncd("--once").returncode == 0
    span = time.monotonic() - started
    killed = rounds = 0
    while killed < 6:
        rounds += 1
        assert rounds <= 40, f"only {killed} runs of {rounds} were killed before they finished"
        change_kinto(rounds)
        proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, span))
        proc.send_signal(signal.SIGKILL)
        killed += proc.wait() == -signal.SIGKILL
        view, checkpoint = published_view(setup)         # parses: never torn
        history = kinto_history(kinto)
        # Never ahead: everything Kinto changed up to the checkpoint is in the file as Kinto has it now.
        for rid, record in history.items():
            if checkpoint is not None and record["last_modified"] <= checkpoint:
                if record.get("deleted"):
                    assert rid not in view, (rounds, rid)
                else:
                    assert view.get(rid) == record, (rounds, rid)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert by_id(setup.cache_doc("kinto")["records"]) == kinto.records()


@pytest.mark.release_binaries
def test_sync_tokens_from_the_last_page_page_through_change_sets_and_an_expired_token_brings_one_full_listing(server, setup):
    records = [{"id": i, "title": f"event {i}"} for i in range(1, 8)]
    server.set_records("events", records)
    server.options("events", syncTokens=True, perPage=3)
    text = "".join(line + "\n" for line in recipe("Google sync token", URL=server.url("events")).splitlines()
                   if not line.startswith("BearerTokenCredential="))
    (setup.config / "sources.d" / "events.source").write_text(text)

    def once():
        server.clear_requests()
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        assert by_id(setup.cache_doc("events")["records"]) == by_id(server.records("events"))
        return [req["path"] for req in server.requests("/events")], r.stderr

    paths, _ = once()
    assert len(paths) == 3 and not any("syncToken" in p for p in paths), paths
    # Two changed, one deleted, two added: one change set over two pages, from the token of the listing's last page.
    records = [dict(r, title="changed") if r["id"] in (2, 5) else r for r in records if r["id"] != 4]
    records += [{"id": 8, "title": "new"}, {"id": 9, "title": "new too"}]
    server.set_records("events", records)
    paths, stderr = once()
    assert len(paths) == 2 and "syncToken=7" in paths[0] and "pageToken=" in paths[1], paths
    assert not any(r["id"] == 4 for r in setup.cache_doc("events")["records"])
    # A token the server forgot: 410, then exactly one full listing, said in the log.
    server.set_records("events", records + [{"id": 10, "title": "after expiry"}])
    server.expire_sync_tokens("events")
    paths, stderr = once()
    assert "syncToken=" in paths[0] and not any("syncToken" in p for p in paths[1:]) and len(paths) == 4, paths
    assert "fetching the whole listing: the server answered HTTP 410: the checkpoint is too old" in stderr, stderr
    # The full listing's token is good: the next refresh is a change set again.
    paths, _ = once()
    assert len(paths) == 1 and "syncToken=" in paths[0], paths


def test_kinto_changes_made_while_the_first_listing_is_paged_come_with_the_next_delta(tmp_path, setup):
    """Between two pages of the first listing (newest first), a record already read is changed, one is deleted, then
    a record on a page not read yet is changed: the listing's own highest stamp (the last change's) is above the
    first two changes; its first page's highest stamp, the checkpoint, is below all three, and the delta from it
    follows in the same run."""
    kinto = Kinto(tmp_path / "kinto", page_size=100)
    relay = Relay(kinto)
    try:
        kinto.create([{"id": f"r{i:03}", "title": f"record {i}"} for i in range(300)])
        kinto_delta_source(setup, relay.url())
        newest = sorted(kinto.records(), key=lambda r: r["last_modified"])[-1]["id"]   # on the first page
        oldest = sorted(kinto.records(), key=lambda r: r["last_modified"])[0]["id"]    # on the last page

        def meanwhile():
            kinto.update(newest, {"title": "changed after its page was read"})
            kinto.delete(sorted(kinto.records(), key=lambda r: r["last_modified"])[-2]["id"])
            kinto.update(oldest, {"title": "changed before its page was read"})

        relay.before_next_page = meanwhile
        r = setup.syncd("--once")
        assert r.returncode == 0, r.stderr
        # The listing missed all three (the records changed moved to its first page, already read; the one deleted was
        # held); the delta that followed at once brought them.
        gets = record_gets(relay)
        assert len(gets) == 4 and "_since=" in gets[-1], gets
        assert by_id(setup.cache_doc("kinto")["records"]) == kinto.records()
    finally:
        relay.stop()
        kinto.stop()


def test_probe_tries_the_delta_request_and_names_a_query_kinto_takes_for_a_filter(kinto, setup):
    kinto.create([{"id": f"r{i:02}", "title": f"record {i}"} for i in range(20)])
    kinto_delta_source(setup, kinto.url())
    r = setup.syncd("--probe", "kinto")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kinto: delta: 10 records, all stamped above the checkpoint: DeltaQuery= filters as it should" in r.stdout, r.stdout
    # A misspelt parameter (Kinto's is _since): Kinto filters on a field "since" that no record has.
    kinto_delta_source(setup, kinto.url(), DeltaQuery="since={checkpoint}&_sort=last_modified")
    r = setup.syncd("--probe", "kinto")
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("kinto: delta: no record came back although this page has records stamped above the checkpoint: the server may "
            "take a parameter of DeltaQuery= it does not know for a filter; check DeltaQuery=") in r.stdout, r.stdout
    assert not setup.cache_file("kinto").exists()                    # a probe stores nothing


def test_probe_names_a_server_that_ignores_the_delta_query(server, setup):
    server.set_records("posts", [{"id": i, "modified": i} for i in range(1, 6)])
    setup.add_source("posts", server.url("posts"), Delta="watermark", DeltaField="/modified", DeltaQuery="since={checkpoint}")
    r = setup.syncd("--probe", "posts")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "posts: delta: GET " in r.stdout and "since=3 (the middle stamp of this page as the checkpoint: 2 of the page's records are above it)" in r.stdout, r.stdout
    assert ("posts: delta: 2 of 5 records came back stamped below the checkpoint: the server does not filter as "
            "DeltaQuery= asks; check DeltaQuery=") in r.stdout, r.stdout


def test_probe_takes_a_filter_of_at_or_after_the_checkpoint_as_harmless(kinto, setup):
    """Kinto's min_last_modified= is "at or after" (like Datasette's updated__gte, which syncd.conf(5) mentions): the
    record at the checkpoint comes back each time, which is harmless."""
    kinto.create([{"id": f"r{i:02}", "title": f"record {i}"} for i in range(20)])
    kinto_delta_source(setup, kinto.url(), DeltaQuery="min_last_modified={checkpoint}&_sort=last_modified")
    r = setup.syncd("--probe", "kinto")
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("kinto: delta: 11 records, 1 of them stamped at the checkpoint and the others above it: DeltaQuery= asks for changes "
            "at or after it, which brings those again each time (harmless)") in r.stdout, r.stdout
