"""Rules 5 and 6 in real network namespaces: the daemon in one, the server in another, joined by a veth
pair (198.18.0.0/24, RFC 2544 benchmarking space). The root namespace is never touched."""
import json
import os
import subprocess
import time

import pytest

from conftest import POSTS, SyncServer, wait_for
from test_daemon_retry import assert_resting
from test_syncctl import syncctl

SERVER_IP, DAEMON_IP = "198.18.0.1", "198.18.0.2"


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def netns(tmp_path):
    tag = f"{os.getpid() % 100000}"
    srv, dmn = f"syncd-srv-{tag}", f"syncd-dmn-{tag}"
    ip("netns", "add", srv)
    ip("netns", "add", dmn)
    try:
        ip("-n", srv, "link", "add", "vs", "type", "veth", "peer", "name", "vd", "netns", dmn)
        ip("-n", srv, "addr", "add", f"{SERVER_IP}/24", "dev", "vs")
        ip("-n", dmn, "addr", "add", f"{DAEMON_IP}/24", "dev", "vd")
        for ns, dev in ((srv, "vs"), (dmn, "vd"), (srv, "lo"), (dmn, "lo")):
            ip("-n", ns, "link", "set", dev, "up")
        server = SyncServer(tmp_path, host=SERVER_IP, netns=srv)
        yield srv, dmn, server
        server.stop()
    finally:
        subprocess.run(["ip", "netns", "del", srv], capture_output=True)
        subprocess.run(["ip", "netns", "del", dmn], capture_output=True)


def network_config(setup, debounce="1s"):
    setup.write_main(f"[Network]\nDebounceSec={debounce}\nReachabilityIntervalSec=0\n"
                     "[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n")


def requests(server):
    return [r for r in server.requests() if r["path"] == "/posts"]


def test_link_down_goes_offline_and_link_up_refreshes_once(netns, setup, notify, daemons):
    srv, dmn, server = netns
    network_config(setup)
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, notify=notify, netns=dmn)
    d.wait_log("posts: synced 2 records")
    before = setup.cache_file("posts").read_bytes()
    assert len(requests(server)) == 1, "the startup refresh ran more than once"

    ip("-n", srv, "link", "set", "vs", "down")
    notify.wait_for("Offline", timeout=10)
    d.wait_log("Offline (")
    assert setup.cache_file("posts").read_bytes() == before        # still readable, untouched
    time.sleep(1.5)
    assert len(requests(server)) == 1, "requests were made while offline"

    server.set_records("posts", POSTS + [{"id": 3, "title": "new"}])
    server.clear_requests()
    ip("-n", srv, "link", "set", "vs", "up")
    # Once the link is back the refresh follows (after DebounceSec=: SourceSchedulerTests.
    # aLongOutageWithNothingPendingStillDebouncesTheLinkComingBack), announced before it is made.
    wait_for(lambda: requests(server), timeout=10, what="a refresh after the link came back")
    d.wait_log("posts: synced 3 records")
    log = d.output()
    assert -1 < log.rfind("Offline (") < log.find("Network is back") < log.find("posts: synced 3 records"), log
    assert len(setup.cache_doc("posts")["records"]) == 3
    time.sleep(2.5)
    assert len(requests(server)) == 1


def test_twenty_flaps_in_two_seconds_cause_at_most_two_refreshes(netns, setup, daemons):
    srv, dmn, server = netns
    network_config(setup)
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, netns=dmn)
    d.wait_log("posts: synced 2 records")
    server.clear_requests()
    for _ in range(20):
        ip("-n", srv, "link", "set", "vs", "down")
        time.sleep(0.05)
        ip("-n", srv, "link", "set", "vs", "up")
        time.sleep(0.05)
    time.sleep(6)   # debounce 1 s, its cap, and any follow-up
    count = len(requests(server))
    assert count <= 2, count
    # The kernel batches carrier events (linkwatch, about once a second), so 50 ms flaps may net out to
    # nothing; but whenever the daemon saw the link go down, it must refresh once it is back.
    if "Offline (" in d.output():
        assert "Network is back" in d.output()
        assert count >= 1


def test_watchlinks_no_ignores_link_changes(netns, setup, daemons):
    srv, dmn, server = netns
    setup.write_main("[Network]\nWatchLinks=no\nDebounceSec=500ms\nReachabilityIntervalSec=0\n")
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, netns=dmn)
    d.wait_log("posts: synced 2 records")
    ip("-n", srv, "link", "set", "vs", "down")
    ip("-n", srv, "link", "set", "vs", "up")
    time.sleep(2)
    assert "Offline" not in d.output()
    assert len(requests(server)) == 1


def test_offline_pauses_automatic_attempts_but_a_manual_refresh_still_tries(netns, setup, notify, daemons):
    from test_syncctl import syncctl
    srv, dmn, server = netns
    network_config(setup)
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), TimeoutSec="2s")
    d = daemons(setup, notify=notify, netns=dmn)
    d.wait_log("posts: synced 2 records")
    ip("-n", srv, "link", "set", "vs", "down")
    notify.wait_for("Offline")
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"]["online"] is False and status["daemon"]["links"] in ("none", "carrier")
    assert status["sources"][0]["state"] == "offline"
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 1
    assert "posts" in r.stderr
    d.wait_log("refresh failed")
    assert setup.cache_doc("posts")["records"] == POSTS


@pytest.mark.parametrize("fault,expected", [
    (dict(kind="status", status=503), "backoff"),
    (dict(kind="status", status=503, retryAfter=3600, times=1), "retry-after"),
    (dict(kind="status", status=401), "once"),
])
def test_failures_across_the_veth_follow_the_retry_rules(netns, setup, daemons, fault, expected):
    srv, dmn, server = netns
    setup.write_main("[Network]\nReachabilityIntervalSec=0\n[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\nMaxAttempts=4\n")
    server.set_records("posts", POSTS)
    server.fault("posts", **fault)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, netns=dmn)
    # How long each wait is, is the scheduler's rule (test_daemon_retry.py names its unit tests); across the veth
    # the answers lead to the same requests, log and status as on loopback.
    if expected == "retry-after":
        d.wait_log("retrying in 59min (attempt 2 of 4)")
        assert len(requests(server)) == 1
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        assert len(requests(server)) == 2
        assert setup.cache_doc("posts")["records"] == POSTS
        return
    d.wait_log("not retrying until the next trigger", timeout=20)
    if expected == "once":
        assert_resting(setup, server, 1)
        return
    assert_resting(setup, server, 4)
    assert d.output().count("retrying in ") == 3 and "(attempt 4 of 4)" in d.output()


@pytest.mark.release_binaries
def test_a_loopback_source_is_fetched_with_only_loopback_up(tmp_path, setup, daemons):
    # No link but lo in the daemon's namespace: offline for the network, yet a localhost server answers.
    ns = f"syncd-lo-{os.getpid() % 100000}"
    ip("netns", "add", ns)
    try:
        ip("-n", ns, "link", "set", "lo", "up")
        server = SyncServer(tmp_path, host="127.0.0.1", netns=ns)
        try:
            network_config(setup)
            server.set_records("posts", POSTS)
            setup.add_source("posts", server.url("posts").replace("127.0.0.1", "localhost"))
            d = daemons(setup, netns=ns)
            d.wait_log("Offline (")
            # Logged by the loop at start, not necessarily before the "Offline" line: waited for, not read once.
            d.wait_log("no cached data yet (no cache file for posts: fetching its listing)")
            d.wait_log("posts: synced 2 records")
            assert setup.cache_doc("posts")["records"] == POSTS
        finally:
            server.stop()
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
