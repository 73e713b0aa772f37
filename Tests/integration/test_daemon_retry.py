"""syncd(8) GUARANTEES 7 against a real server: bounded exponential backoff with jitter, Retry-After, no retry on 401.

How long each delay is, is the scheduler's rule, checked with a manual clock in SyncCoreTests (SourceScheduler,
BackoffPolicy, PersistedRetryState); these tests check what a real server's answers lead to: how many requests,
in which order, what the log and the status say, and that a saved retry state is obeyed after a restart."""
import json
import sqlite3
import time

from conftest import POSTS, wait_for
from test_syncctl import syncctl


def retry_config(setup, initial="200ms", maximum="1s", attempts=4):
    setup.write_main(f"[Retry]\nInitialDelaySec={initial}\nMaxDelaySec={maximum}\nMaxAttempts={attempts}\n"
                     "[Network]\nReachabilityIntervalSec=0\n")


def attempts(server):
    return server.requests("/posts")


def posts_status(setup):
    """The source's entry in `syncctl status --json`."""
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]


def assert_resting(setup, server, count):
    """The source used up its cycle: the scheduler holds no retry (the next automatic attempt is the periodic
    one, IntervalSec= away), and the server saw `count` requests."""
    status = posts_status(setup)
    assert (status["state"], status["nextAttempt"]) == ("error", None), status
    assert len(attempts(server)) == count, attempts(server)


def test_503_retries_with_backoff_then_rests(server, setup, daemons):
    retry_config(setup)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=503)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("not retrying until the next trigger", timeout=20)
    # Four attempts, each failure saying which attempt comes next, then it rests: no fifth attempt. (The delay
    # after failure n lies in [InitialDelaySec, min(MaxDelaySec, InitialDelaySec*2^n)]: SourceSchedulerTests.
    # backoffDelaysStayWithinBoundsAndAttemptsStopAtMaxAttempts, BackoffPolicyTests.)
    assert_resting(setup, server, 4)
    log = d.output()
    marks = [log.find("retrying in "), *(log.find(f"(attempt {n} of 4)") for n in (2, 3, 4)),
             log.find("not retrying until the next trigger")]
    assert -1 not in marks and marks[1:] == sorted(marks[1:]), log


def test_retry_after_is_honoured(server, setup, daemons):
    # Retry-After: 3600 against a backoff of at most 1 s: the retry is scheduled an hour away (the scheduler's own
    # account, in the log and the status), not at the backoff's. SourceSchedulerTests.retryAfterIsHonouredAndCapped
    # checks when it comes; a person's refresh still goes out at once.
    retry_config(setup)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=503, retryAfter=3600, times=1)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("HTTP 503")
    d.wait_log("retrying in 59min (attempt 2 of 4)")
    status = posts_status(setup)
    assert (status["state"], status["attempt"]) == ("backoff", 1) and status["nextAttempt"], status
    assert len(attempts(server)) == 1
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert len(attempts(server)) == 2
    assert setup.cache_doc("posts")["records"] == POSTS


def test_401_is_tried_exactly_once(server, setup, daemons):
    retry_config(setup)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=401)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("not retrying until the next trigger")
    assert_resting(setup, server, 1)
    assert "HTTP 401" in d.output() and "check the credentials" in d.output()


def test_a_permanent_failure_is_not_probed(server, setup, daemons):
    # Reachability cannot cure a 404: no HEAD requests while the source rests, only the next trigger retries.
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=400ms\n[Network]\nReachabilityIntervalSec=300ms\n")
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=404)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("not retrying until the next trigger")
    assert_resting(setup, server, 1)
    time.sleep(1.0)                                         # three probe intervals: none ran
    assert [r["method"] for r in server.requests()] == ["GET"]
    assert "Reachability probe" not in d.output()


def test_retry_after_survives_a_restart(server, setup, daemons):
    retry_config(setup)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=503, retryAfter=3600, times=1)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("retrying in 59min (attempt 2 of 4)")
    assert d.stop() == 0
    d2 = daemons(setup)
    # The restarted daemon keeps the server's Retry-After: no startup refresh, the retry still scheduled (when:
    # PersistedRetryStateTests.backoffRoundTripsAcrossARestart); a person's refresh goes out at once.
    status = posts_status(setup)
    assert (status["state"], status["attempt"]) == ("backoff", 1) and status["nextAttempt"], status
    assert len(attempts(server)) == 1
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    d2.wait_log("posts: synced 2 records")
    assert len(attempts(server)) == 2


def test_reachability_probes_only_while_failing_and_recovery_refreshes(server, setup, daemons, tmp_path):
    import json
    from conftest import SyncServer, free_port
    from test_syncctl import syncctl
    probe_port = free_port()
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=400ms\nMaxAttempts=2\n"
                     f"[Network]\nReachabilityURL=http://127.0.0.1:{probe_port}/\nReachabilityIntervalSec=300ms\nDebounceSec=200ms\n")
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    status = lambda: json.loads(syncctl(setup, "status", "--json").stdout)
    time.sleep(1)                                           # three probe intervals
    assert status()["daemon"]["reachable"] is None          # healthy: no probe has run
    server.fault("posts", kind="status", status=503)
    syncctl(setup, "refresh", "posts")
    d.wait_log("not retrying until the next trigger")
    wait_for(lambda: status()["daemon"]["reachable"] is False, timeout=5, what="a failed probe")
    assert status()["sources"][0]["state"] == "error"
    # The server comes back; the probe target answers: the resting source is refreshed without waiting 15 min.
    server.clear_fault("posts")
    probe = SyncServer(tmp_path / "probe", port=probe_port)
    try:
        d.wait_log("Reachability probe succeeds again; refreshing failing sources", timeout=5)
        d.wait_log("posts: not modified (HTTP 304)", timeout=5)
        assert status()["daemon"]["reachable"] is True
        assert any(r["method"] == "HEAD" for r in probe.requests())
        # Healthy again: probing stops.
        time.sleep(0.5)
        probe.clear_requests()
        time.sleep(1)                                       # three probe intervals
        assert probe.requests() == []
    finally:
        probe.stop()



def test_a_probe_of_a_listing_larger_than_64_kib_counts_as_reachable(setup, daemons, tmp_path):
    # The probe is a HEAD of the source's own URL: its Content-Length announces a large listing, no body
    # comes. Any HTTP answer means reachable, however large the announced listing is.
    import json
    from conftest import SyncServer, free_port
    from test_syncctl import syncctl
    port = free_port()
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=400ms\nMaxAttempts=2\n"
                     "[Network]\nReachabilityIntervalSec=300ms\nDebounceSec=200ms\n")
    setup.add_source("big", f"http://127.0.0.1:{port}/big")
    d = daemons(setup)
    d.wait_log("not retrying until the next trigger")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    status = lambda: json.loads(syncctl(setup, "status", "--json").stdout)
    wait_for(lambda: status()["daemon"]["reachable"] is False, timeout=5, what="a failed probe")
    assert status()["sources"][0]["state"] == "error"
    records = [{"id": i, "title": f"Post {i}", "body": "x" * 200} for i in range(1, 501)]
    server = SyncServer(tmp_path / "late", port=port)
    try:
        server.set_records("big", records)
        d.wait_log("Reachability probe succeeds again; refreshing failing sources", timeout=5)
        d.wait_log("big: synced 500 records", timeout=5)
        heads = [r for r in server.requests("/big") if r["method"] == "HEAD"]
        assert heads, "the recovery must come from a probe, not from a retry"
        assert status()["daemon"]["reachable"] is True
        assert len(json.dumps(records)) > 1 << 16
        assert [r["id"] for r in setup.cache_doc("big")["records"]] == list(range(1, 501))
    finally:
        server.stop()

def _saved_retry_state(setup):
    with sqlite3.connect(setup.db()) as db:
        return db.execute("SELECT retry_state FROM sources WHERE name = 'posts'").fetchone()[0]


def _save_retry_state(setup, text):
    with sqlite3.connect(setup.db()) as db:
        db.execute("UPDATE sources SET retry_state = ? WHERE name = 'posts'", (text,))


def test_a_retry_state_saved_by_the_earlier_release_still_loads(server, setup, daemons):
    # The text the previous release's JSONEncoder wrote (member order was not fixed): attempt 2 of a
    # backoff, the next attempt due in 10 min.
    retry_config(setup, initial="200ms", maximum="1h", attempts=4)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=503, times=1)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("refresh failed")
    assert d.stop() == 0
    # What this release saved is JSON any reader (the earlier release's JSONDecoder too) understands.
    assert json.loads(_saved_retry_state(setup))["phase"] == "backoff"
    _save_retry_state(setup, '{"nextAttemptInMilliseconds":600000,"attempt":2,"phase":"backoff"}')
    server.clear_requests()
    d2 = daemons(setup)
    # The restored backoff: attempt 2, the next one scheduled, no startup refresh (when it comes:
    # PersistedRetryStateTests.backoffRoundTripsAcrossARestart, PersistedRetryStateJSONTests).
    status = posts_status(setup)
    assert (status["state"], status["attempt"]) == ("backoff", 2) and status["nextAttempt"], status
    assert attempts(server) == []
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    d2.wait_log("posts: synced 2 records")
    assert len(attempts(server)) == 1
    assert "retry state" not in d2.output()


def test_a_damaged_retry_state_is_reported_and_the_source_starts_fresh(server, setup, daemons):
    retry_config(setup)
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    assert d.stop() == 0
    _save_retry_state(setup, '{"phase":"resting","attempt":1}')
    d2 = daemons(setup)
    d2.wait_log("posts: not modified")
    assert ('posts: Failed to read the saved retry state: unknown phase "resting" (expected "backoff" or '
            '"error"); starting a new retry cycle') in d2.output()
    assert setup.cache_doc("posts")["records"] == POSTS  # the cache is untouched
