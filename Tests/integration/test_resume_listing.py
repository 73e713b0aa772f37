"""Resuming an interrupted first sync (syncd.conf(5), "RESUMING A FIRST SYNC") against Kinto 26.5 from PyPI with the
`# Kinto delta` recipe: 5,000 records over ten `Next-Page` pages. `syncd --once` is killed (SIGKILL) while it waits for
page 5; the daemon then resumes at page 5, not page 1 (counted in the requests Kinto's relay saw), says so in its log
and in `syncctl status` while the listing stays interrupted, and the cache file ends equal to Kinto's records."""
import json
import random
import time
import signal
import threading
import sqlite3
import subprocess

import pytest

from conftest import BIN, free_port, wait_for
from realservers import Kinto
from test_change_feed import Watch, syncctl
from test_real_kinto import Relay, kinto_source, put


def by_id(records):
    return sorted(records, key=lambda r: r["id"])


def record_gets(relay):
    return [path for method, path, _ in relay.queries if method == "GET" and path.split("?")[0].endswith("/records")]


def staged(setup):
    """The staged listing's (method, records kept, pages, records); None when nothing is staged (or no store yet)."""
    if not setup.db().exists():
        return None
    db = sqlite3.connect(setup.db())
    try:
        return db.execute("SELECT method, keep, pages, records FROM listing_resume WHERE source = 'kinto'").fetchone()
    except sqlite3.OperationalError:            # the daemon has not created its tables yet
        return None
    finally:
        db.close()


@pytest.fixture
def kinto(tmp_path):
    server = Kinto(tmp_path / "kinto", page_size=500)
    relay = Relay(server)
    yield server, relay
    relay.stop()
    server.stop()


def on_next_page(relay, number, action):
    """Runs `action` when the `number`th next page (a `_token=` request) is asked for; its return value, a status or
    None, answers for Kinto."""
    seen = [0]

    def hook():
        seen[0] += 1
        if seen[0] == number:
            return action()
        relay.before_next_page = hook
        return None
    relay.before_next_page = hook


def killed_asking_for_next_page(setup, relay, number):
    """Runs `syncd --once` and kills it (SIGKILL) as it asks for its `number`th next page."""
    proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill():
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return 503
    on_next_page(relay, number, kill)
    assert proc.wait(timeout=60) == -signal.SIGKILL


def test_a_first_sync_killed_mid_way_resumes_where_it_stopped(kinto, setup, daemons):
    kinto, relay = kinto
    kinto.create([{"id": f"r{i:05}", "title": f"record {i}", "n": i} for i in range(5000)])
    kinto_source(setup, relay.url(), name="Kinto delta", StagePagesAfterSec="0")
    # Killed while it waits for page 5: pages 1–4 were staged, each with the next page's URL.
    killed_asking_for_next_page(setup, relay, 4)
    assert staged(setup) == ("next-page", 2000, 4, 2000)
    assert not setup.cache_file("kinto").exists()      # apps never see part of a collection
    wait_for(lambda: len(record_gets(relay)) == 5, what="the relay to log page 5's request")   # logged after the kill

    # The daemon resumes at page 5; page 6 fails once, so the listing stays interrupted, at record 2,500.
    relay.queries.clear()
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    on_next_page(relay, 2, lambda: 503)
    d = daemons(setup)
    d.wait_log("kinto: resuming the listing at record 2001 (page 5)", timeout=30)
    wait_for(lambda: staged(setup) == ("next-page", 2500, 5, 2500), what="page 5 staged")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    wait_for(lambda: json.loads(syncctl(setup, "status", "kinto", "--json").stdout).get("lastError"),
             what="the failed page")
    status = json.loads(syncctl(setup, "status", "kinto", "--json").stdout)
    assert (status["resumeAt"], status["resumePage"]) == (2500, 5), status
    text = syncctl(setup, "status", "kinto").stdout
    assert "Listing: interrupted: the next refresh resumes at record 2,501 (page 6)" in text, text
    gets = record_gets(relay)
    assert len(gets) == 2 and all("_token=" in path for path in gets), gets

    relay.queries.clear()
    r = syncctl(setup, "refresh", "kinto", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr
    d.wait_log("kinto: resuming the listing at record 2501 (page 6)", timeout=30)
    gets = record_gets(relay)
    # Pages 6–10, then the delta for what changed while the listing was paged; page 1 never again.
    assert len(gets) == 6 and all("_token=" in path for path in gets[:5]) and "_since=" in gets[5], gets
    assert by_id(setup.cache_doc("kinto")["records"]) == by_id(kinto.records())
    assert staged(setup) is None
    status = json.loads(syncctl(setup, "status", "kinto", "--json").stdout)
    assert "resumeAt" not in status and status["records"] == 5000, status


def test_sigkill_at_random_moments_of_first_syncs_never_publishes_part_and_the_staging_only_grows(kinto, setup, daemons):
    kinto, relay = kinto
    kinto.create([{"id": f"r{i:05}", "title": f"record {i}"} for i in range(5000)])
    kinto_source(setup, relay.url(), name="Kinto delta", StagePagesAfterSec="0")
    rng = random.Random(29)
    # How long one page takes here, roughly: a whole first sync is ten pages and the delta after them.
    started = time.monotonic()
    assert setup.syncd("--once").returncode == 0
    page_span = (time.monotonic() - started) / 20
    setup.cache_file("kinto").unlink()
    setup.db().unlink()
    # A local change queued while the server could not be reached: it must survive every kill and reach Kinto. Pushed
    # first, it makes Kinto's listing 5,001 records: eleven pages.
    kinto_source(setup, relay.url().replace(f":{relay.httpd.server_port}/", f":{free_port()}/"), name="Kinto delta", StagePagesAfterSec="0")
    d = daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    r = put(setup, {"id": "mine", "title": "made offline"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert d.stop() == 0
    kinto_source(setup, relay.url(), name="Kinto delta", StagePagesAfterSec="0")
    pages = kills = 0
    while kills < 4 and 10 - pages - 3 >= 1:
        kill_round = kills = kills + 1
        proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # At a random moment while page k+1 or k+2 of those left is received, parsed or staged: never the last.
        k = rng.randint(1, min(3, 10 - pages - 3))
        on_next_page(relay, k, lambda: threading.Timer(rng.uniform(0.0, page_span), proc.send_signal, (signal.SIGKILL,)).start())
        assert proc.wait(timeout=60) == -signal.SIGKILL, kill_round
        relay.before_next_page = None
        # Never a part of the collection published (the file shows the local change alone), never a page staged
        # without its resume point, never a step back.
        assert [r["id"] for r in setup.cache_doc("kinto")["records"]] == ["mine"]
        row = staged(setup)
        now = row[2] if row else 0
        assert now >= pages and (row is None or row == ("next-page", now * 500, now, now * 500)), (kill_round, row)
        pages = now
        assert outbox_rows(setup) == 1             # sent, not yet seen in a listing: kept, once
    assert kills >= 2 and pages > 0, (kills, pages)
    assert kinto.record("mine")["title"] == "made offline"
    relay.queries.clear()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    # The last run asked only for the pages left, and the delta after them; never for page 1. (A killed run's page may
    # reach the relay's log late, after it was cleared: the last run asks for that page too, so pages are counted once.)
    gets = record_gets(relay)
    assert len(set(gets)) == 11 - pages + 1 and all("_token=" in p or "_since=" in p for p in gets), (pages, gets)
    assert by_id(setup.cache_doc("kinto")["records"]) == by_id(kinto.records())
    assert staged(setup) is None
    # The change made offline is in the cache file as Kinto has it, its outbox entry settled.
    assert any(r["id"] == "mine" and r["title"] == "made offline" for r in setup.cache_doc("kinto")["records"])
    assert outbox_rows(setup) == 0


def outbox_rows(setup):
    db = sqlite3.connect(setup.db())
    try:
        return db.execute("SELECT count(*) FROM outbox").fetchone()[0]
    finally:
        db.close()


def test_an_edit_made_while_the_first_sync_is_interrupted_reaches_kinto(kinto, setup, daemons):
    """No listing is held yet, so the edit goes out as a create; Kinto answers a POST of a known ID 200 with its own
    copy, unchanged. That is a conflict (ConflictPolicy=client-wins here: the edit is sent as a PUT), never a
    delivery: the edit reaches Kinto's own records."""
    kinto, relay = kinto
    kinto.create([{"id": f"r{i:05}", "title": f"record {i}"} for i in range(1200)])
    kinto_source(setup, relay.url(), name="Kinto delta", ConflictPolicy="client-wins", StagePagesAfterSec="0")
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    on_next_page(relay, 1, lambda: 503)
    d = daemons(setup)
    wait_for(lambda: staged(setup) == ("next-page", 500, 1, 500), what="page 1 staged")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    r = put(setup, {"id": "r00050", "title": "edited during the first sync"})
    assert r.returncode == 0, r.stdout + r.stderr
    r = syncctl(setup, "refresh", "kinto", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr
    d.wait_log("conflict on r00050 (the server already holds r00050: it answered the create HTTP 200 with its own copy)")
    assert kinto.record("r00050")["title"] == "edited during the first sync"
    assert by_id(setup.cache_doc("kinto")["records"]) == by_id(kinto.records())
    assert json.loads(syncctl(setup, "outbox", "--json").stdout) == []


def test_while_a_resumed_listing_is_listed_again_status_and_watchers_already_see_it(kinto, setup, daemons):
    """Without `Delta=`, a resumed listing is followed in the same refresh by the whole listing again. Its file is
    published first, so from then on `syncctl status` counts its records (no "resuming at") and watchers get its
    `saved`; the second listing, finding nothing new, sends no second `saved`."""
    kinto, relay = kinto
    kinto.create([{"id": f"r{i:05}", "title": f"record {i}"} for i in range(1500)])
    kinto_source(setup, relay.url(), StagePagesAfterSec="0")
    killed_asking_for_next_page(setup, relay, 2)      # killed while it waits for page 3: pages 1 and 2 staged
    assert staged(setup) == ("next-page", 1000, 2, 1000)

    watching, resumed, go_on = threading.Event(), threading.Event(), threading.Event()

    def second_listing():
        resumed.set()                                  # page 2 of the listing again: the resumed one is published
        assert go_on.wait(60)
    relay.before_next_page = lambda: (watching.wait(60), setattr(relay, "before_next_page", second_listing))[1]
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    d = daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    watch = Watch(setup)
    try:
        baseline = watch.event()
        assert (baseline["event"], baseline["records"]) == ("current", 0), baseline
        watching.set()                                 # the resumed listing asks for page 3 now
        assert resumed.wait(60), "the listing again never reached its page 2"
        status = json.loads(syncctl(setup, "status", "kinto", "--json").stdout)
        assert status["records"] == 1500 and status["lastSuccess"] and "resumeAt" not in status, status
        saved = watch.event()
        assert (saved["event"], saved["records"], saved.get("truncated")) == ("saved", 1500, True), saved  # > 1000 IDs
        go_on.set()
        d.wait_log("kinto: listing again now", timeout=10)
        wait_for(lambda: json.loads(syncctl(setup, "status", "kinto", "--json").stdout)["state"] != "syncing",
                 what="the listing again to end")
        # The next event is the local change made now: the listing again, unchanged, sent nothing.
        r = put(setup, {"id": "r00001", "title": "edited after the first sync"})
        assert r.returncode == 0, r.stdout + r.stderr
        after = watch.event()
        assert (after["event"], after["changed"]) == ("local", ["r00001"]), after
    finally:
        go_on.set()
        watch.stop()
    records = {r["id"]: r for r in setup.cache_doc("kinto")["records"]}
    assert sorted(records) == sorted(r["id"] for r in kinto.records()) and records["r00001"]["title"] == "edited after the first sync"
