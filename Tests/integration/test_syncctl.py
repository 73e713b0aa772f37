"""syncctl and the Varlink API against a running daemon: exact output, exit codes, permissions,
a client nobody here wrote (the reference Python varlink implementation), logout (rule 9)."""
import json
import re
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import BIN, POSTS, wait_for


def syncctl(setup, *args, env=None, as_user=None, user="nobody"):
    """Runs syncctl on the test's daemon; with `as_user` (the another_user fixture) as `user`."""
    cmd = [str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), *args]
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.update(env or {})
    if as_user:
        return as_user.run(cmd, user=user, capture_output=True, text=True, timeout=30, env=full_env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=full_env)


@pytest.fixture
def shared(setup, another_user):
    """The daemon's runtime folder inside the another_user fixture's folder, so "nobody" can reach the socket."""
    setup.runtime = another_user.folder / "run"
    setup.write_main()
    return another_user


def test_status_json_matches_the_spec_shape(running, setup, server):
    r = syncctl(setup, "status", "--json")
    assert r.returncode == 0, r.stderr
    status = json.loads(r.stdout)
    assert set(status["daemon"]) >= {"version", "account", "online", "links", "reachable", "uptimeSec"}
    assert status["daemon"]["version"] == "1.0.0" and status["daemon"]["account"] == "default"
    source = status["sources"][0]
    assert set(source) >= {"name", "url", "state", "records", "pending", "conflicts", "lastSuccess", "lastAttempt",
                           "lastError", "stale", "attempt", "nextAttempt"}
    assert (source["name"], source["url"], source["state"], source["records"], source["stale"]) == \
        ("posts", server.url("posts"), "idle", 2, False)
    pretty = syncctl(setup, "status", "--json=pretty")
    assert json.loads(pretty.stdout) == json.loads(syncctl(setup, "status", "--json=short").stdout)
    assert "\n  " in pretty.stdout


def test_status_reads_like_systemctl(running, setup):
    r = syncctl(setup, "status")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith("● syncd — online (links: ") and "account default" in lines[0]
    assert any(l.startswith("● posts  idle  2 records  synced ") for l in lines)
    assert "\x1b[" not in r.stdout       # no colour when not a terminal
    assert syncctl(setup, "status", "--no-legend").stdout.splitlines()[0].startswith("● posts")


def test_stale_source_shows_the_reason(running, setup, server):
    server.fault("posts", kind="status", status=503)
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 1
    assert "HTTP 503" in r.stderr
    out = syncctl(setup, "status").stdout
    assert "stale since" in out and "HTTP 503" in out
    assert setup.cache_doc("posts")["records"] == POSTS


def test_refresh_wait_list_and_get(running, setup, server):
    server.set_records("posts", POSTS + [{"id": 3, "title": "Three"}])
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 0, r.stderr
    assert "posts" in r.stdout and "3 records" in r.stdout
    listed = json.loads(syncctl(setup, "list", "posts", "--json").stdout)
    assert listed == POSTS + [{"id": 3, "title": "Three"}]
    r = syncctl(setup, "get", "posts", "3")
    assert r.returncode == 0 and json.loads(r.stdout) == {"id": 3, "title": "Three"}
    r = syncctl(setup, "get", "posts", "99")
    assert r.returncode == 1 and "99" in r.stderr
    r = syncctl(setup, "list", "nope")
    assert r.returncode == 1 and "nope" in r.stderr


@pytest.fixture
def writable(server, setup, daemons):
    """posts is Writable=yes and the server refuses every write with 503: local changes stay pending."""
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Network]\nDebounceSec=300ms\n"
                     "ReachabilityIntervalSec=0\n")
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.fault("posts", kind="status", status=503, method="DELETE")
    return d


def test_get_and_list_show_a_pending_delete_like_the_cache_file(writable, setup, server):
    r = syncctl(setup, "delete", "posts", "1")
    assert r.returncode == 0, r.stderr
    doc = setup.cache_doc("posts")
    assert doc["records"] == POSTS[1:] and doc["pending"] == [1]
    assert json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["records"] == 1   # the local view
    r = syncctl(setup, "get", "posts", "1")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "syncctl: no record with ID 1 in source posts\n")
    assert json.loads(syncctl(setup, "list", "posts", "--json").stdout) == doc["records"]
    r = syncctl(setup, "list", "posts")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "1 record listed."
    # Nothing was lost: the removal is still queued and the server still has the record.
    wait_for(lambda: any(q["method"] == "DELETE" for q in server.requests()), what="a refused DELETE")
    assert [(e["id"], e["operation"]) for e in json.loads(syncctl(setup, "outbox", "--json").stdout)] == [("1", "delete")]
    assert server.records("posts") == POSTS
    assert setup.cache_doc("posts")["pending"] == [1]


def test_get_and_list_show_a_pending_put_like_the_cache_file(writable, setup, server):
    server.fault("posts", kind="status", status=503, method="POST")
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                       input=json.dumps({"id": "x1", "title": "Local"}), capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stdout) == (0, "x1\n"), r.stderr
    doc = setup.cache_doc("posts")
    assert doc["records"] == POSTS + [{"id": "x1", "title": "Local"}] and doc["pending"] == ["x1"]
    assert json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["records"] == 3   # the local view
    r = syncctl(setup, "get", "posts", "x1")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"id": "x1", "title": "Local"}
    assert json.loads(syncctl(setup, "list", "posts", "--json").stdout) == doc["records"]
    assert syncctl(setup, "list", "posts").stdout.splitlines()[-1] == "3 records listed."
    # Still queued, not on the server: nothing lost, nothing invented.
    wait_for(lambda: any(q["method"] == "POST" for q in server.requests()), what="a refused POST")
    assert [e["id"] for e in json.loads(syncctl(setup, "outbox", "--json").stdout)] == ["x1"]
    assert server.records("posts") == POSTS


def test_refresh_wait_of_every_source_prints_each_outcome_and_names_each_failure(server, setup, daemons):
    server.set_records("posts", POSTS)
    server.set_records("users", [{"id": "u"}])
    setup.add_source("posts", server.url("posts"))
    setup.add_source("users", server.url("users"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    d.wait_log("users: synced 1 record ")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    users_before = setup.cache_file("users").read_bytes()
    server.set_records("posts", POSTS + [{"id": 3}])
    server.fault("users", kind="status", status=503)
    r = syncctl(setup, "refresh", "--wait")
    assert (r.returncode, r.stdout) == (1, "posts: updated, 3 records\n"), r.stderr
    assert r.stderr.startswith("syncctl: refresh of users failed: HTTP 503") and r.stderr.count("\n") == 1, r.stderr
    r = syncctl(setup, "refresh", "--wait", "--json")
    assert r.returncode == 1
    outcomes = json.loads(r.stdout)
    assert [(o["source"], o["result"], o["records"]) for o in outcomes] == [("posts", "unchanged", 3), ("users", "failed", 1)]
    assert "HTTP 503" in outcomes[1]["error"] and "error" not in outcomes[0]
    assert r.stderr.startswith("syncctl: refresh of users failed: HTTP 503")
    # Nothing lost: the failed source keeps its copy byte for byte, the other one has the new listing.
    assert setup.cache_file("users").read_bytes() == users_before
    assert setup.cache_doc("posts")["records"] == POSTS + [{"id": 3}]
    server.clear_fault("users")
    r = syncctl(setup, "refresh", "--wait")
    assert (r.returncode, r.stdout, r.stderr) == (0, "posts: unchanged, 3 records\nusers: unchanged, 1 record\n", "")
    r = syncctl(setup, "refresh", "posts", "--wait", "--json")
    assert json.loads(r.stdout) == {"source": "posts", "state": "idle", "records": 3, "result": "unchanged"}


def test_refresh_wait_of_every_source_without_more_sums_up_or_names_every_failure(server, setup, daemons):
    import varlink
    for name in ("posts", "users", "tags"):
        server.set_records(name, [{"id": 1}])
        setup.add_source(name, server.url(name))
    d = daemons(setup)
    for name in ("posts", "users", "tags"):
        d.wait_log(f"{name}: synced 1 record ")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    with varlink.Client(address=f"unix:{setup.runtime / 'io.syncd.Manager'}") as client:
        with client.open("io.syncd.Manager") as manager:
            reply = manager.Refresh(None, True)
            assert (reply.get("source"), reply["result"], reply["records"]) == (None, "unchanged", 3)
            server.fault("tags", kind="status", status=503)
            server.fault("users", kind="status", status=500)
            with pytest.raises(varlink.VarlinkError) as failure:
                manager.Refresh(None, True)
    error = failure.value
    assert error.error() == "io.syncd.Manager.RefreshFailed"
    parameters = error.parameters()
    assert parameters["source"] == "tags" and "HTTP 503" in parameters["reason"]
    assert "users failed too: " in parameters["reason"] and "HTTP 500" in parameters["reason"]


def test_list_pages_through_large_listings(server, setup, daemons):
    records = [{"id": i} for i in range(2500)]
    server.set_records("big", records)
    setup.add_source("big", server.url("big"))
    d = daemons(setup)
    d.wait_log("big: synced 2500 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert json.loads(syncctl(setup, "list", "big", "--json").stdout) == records


def test_usage_errors_and_unreachable_daemon(setup):
    r = syncctl(setup, "frobnicate")
    assert r.returncode == 2 and "Try 'syncctl" in r.stderr
    r = syncctl(setup, "status")
    assert r.returncode == 3
    assert "cannot connect to" in r.stderr and "Is syncd running?" in r.stderr


def test_unprivileged_user_may_read_status_only(shared, running, setup):
    r = syncctl(setup, "status", as_user=shared)
    assert r.returncode == 0, r.stderr
    for args in (("refresh", "posts"), ("list", "posts"), ("get", "posts", "1"), ("logout",), ("reload",)):
        r = syncctl(setup, *args, as_user=shared)
        assert r.returncode == 1, args
        assert "permission denied" in r.stderr.lower(), r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS


def test_a_socket_closed_to_the_user_is_explained(shared, running, setup):
    # The daemon's runtime folder (made for this test) closed to others: "nobody" cannot reach the socket.
    os.chmod(setup.runtime, 0o700)
    r = syncctl(setup, "status", as_user=shared)
    assert r.returncode == 3
    assert "Permission denied" in r.stderr and "check their permissions" in r.stderr
    assert "Is syncd running?" not in r.stderr
    assert syncctl(setup, "status").returncode == 0                 # the daemon is fine


def test_reference_python_varlink_client(running, setup):
    import varlink
    with varlink.Client(address=f"unix:{setup.runtime / 'io.syncd.Manager'}") as client:
        with client.open("org.varlink.service") as service:
            info = service.GetInfo()
            assert "io.syncd.Manager" in info["interfaces"]
            description = service.GetInterfaceDescription("io.syncd.Manager")["description"]
            assert description.startswith("# ") or "interface io.syncd.Manager" in description
            for method in ("GetStatus", "Refresh", "List", "Get", "Watch", "Logout", "Reload", "Put", "Delete",
                           "ListOutbox", "ListConflicts", "Resolve"):
                assert f"method {method}(" in description
        with client.open("io.syncd.Manager") as manager:
            status = manager.GetStatus()
            assert status["sources"][0]["name"] == "posts"
            assert status["sources"][0]["records"] == 2



def test_get_info_names_the_vendor_product_and_manual_page(running, setup):
    import varlink
    with varlink.Client(address=f"unix:{setup.runtime / 'io.syncd.Manager'}") as client:
        with client.open("org.varlink.service") as service:
            info = service.GetInfo()
    assert info["vendor"] == "syncd" and info["product"] == "syncd"
    assert info["url"] == "man:syncd(8)"
    version = subprocess.run([str(BIN / "syncd"), "--version"], capture_output=True, text=True, timeout=10).stdout
    assert info["version"] and info["version"] in version

class Watch:
    """A running `syncctl watch`; its lines arrive through a thread so a missing one fails in 10 s, not hangs."""

    def __init__(self, setup, *args):
        # SIGINT as a terminal sends it (stop() interrupts the watch): a test run started in the background of a
        # non-interactive shell inherits SIGINT ignored (bash does that to asynchronous commands), so it is reset here.
        self.proc = subprocess.Popen([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "watch",
                                      *args], stdout=subprocess.PIPE, text=True, env=dict(os.environ, NO_COLOR="1"),
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()

    def line(self, timeout=10):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"syncctl watch printed nothing within {timeout}s") from None

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(5)


def test_watch_starts_with_the_current_state_then_prints_one_line_per_cache_change(running, setup, server):
    proc = Watch(setup, "--json")
    try:
        first = json.loads(proc.line())
        assert (first["source"], first["records"], first["pending"], first["event"]) == ("posts", 2, 0, "current")
        assert first["savedAt"] == setup.cache_doc("posts")["savedAt"]
        server.set_records("posts", POSTS + [{"id": 5}])
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        event = json.loads(proc.line())
        assert (event["source"], event["records"], event["event"]) == ("posts", 3, "saved")
        # A refresh that only confirms the cache rewrites nothing and says nothing; the logout that follows
        # is the next line.
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        assert syncctl(setup, "logout").returncode == 0
        event = json.loads(proc.line())
        assert (event["source"], event["records"], event["event"]) == ("posts", 0, "logout")
    finally:
        proc.stop()


def test_watch_sends_stale_once_per_failing_period_and_fresh_on_recovery(running, setup, server):
    proc = Watch(setup, "--json")
    try:
        assert json.loads(proc.line())["event"] == "current"
        server.fault("posts", kind="status", status=503, body="down for maintenance")
        for _ in range(2):                                 # two failures: one stale period, one event
            assert syncctl(setup, "refresh", "posts", "--wait").returncode == 1
        event = json.loads(proc.line())
        # Root sees the reason as syncctl status gives it, the server's words included (others: without them).
        assert (event["event"], event["records"]) == ("stale", 2)
        assert event["reason"] == f"HTTP 503 from {server.url('posts')}: down for maintenance"
        server.clear_fault("posts")
        server.set_records("posts", POSTS + [{"id": 5}])
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        assert [json.loads(proc.line())["event"] for _ in range(2)] == ["saved", "fresh"]
        # It had succeeded before the failures (its first listing): the log says "again".
        assert "posts: refresh succeeded again, the cache is current (updated)" in running.output()
        # Healthy again: a refresh that confirms the copy says nothing, and the next line is the logout's.
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        assert syncctl(setup, "logout").returncode == 0
        assert json.loads(proc.line())["event"] == "logout"
    finally:
        proc.stop()


def test_watch_names_a_refused_put_as_parked_with_its_record_outbox_entry_and_status(writable, setup, server):
    proc = Watch(setup, "--json")
    try:
        assert json.loads(proc.line())["event"] == "current"
        server.fault("posts", kind="status", status=422, method="POST", body='{"title": ["This field is required."]}',
                     contentType="application/json")
        r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                           input=json.dumps({"id": "n1", "body": "no title"}), capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0     # a refusal concerns its record only
        events = [json.loads(proc.line()) for _ in range(2)]
        while events[-1]["event"] != "parked":
            events.append(json.loads(proc.line()))
        assert events[0]["event"] == "local"                                     # queued
        parked = events[-1]
        entry = json.loads(syncctl(setup, "outbox", "--json").stdout)[0]
        assert (parked["id"], parked["outboxSeq"], parked["httpStatus"]) == ("n1", entry["seq"], 422)
        # Root sees the server's own words, as syncctl outbox shows them.
        assert parked["message"] == entry["lastError"] and "This field is required." in parked["message"]
        assert entry["state"] == "parked"
    finally:
        proc.stop()


def test_a_reload_that_removes_a_source_with_unpushed_changes_says_they_wait_in_the_outbox(writable, setup, server):
    assert syncctl(setup, "delete", "posts", "1").returncode == 0          # the server refuses DELETE (503): it waits
    (setup.config / "sources.d" / "posts.source").unlink()
    assert syncctl(setup, "reload").returncode == 0
    writable.wait_log("posts: removed from the configuration with 1 record whose local changes are not pushed yet: they "
                      "stay in the outbox ('syncctl outbox' lists them) and go out once a source named posts is configured "
                      "again; its cached file stays until logout")
    assert [(e["id"], e["operation"]) for e in json.loads(syncctl(setup, "outbox", "--json").stdout)] == [("1", "delete")]


def test_watch_text_names_each_change(writable, setup, server):
    proc = Watch(setup)
    try:
        first = proc.line()
        assert first.split(" ", 1)[1] == "posts current: 2 records, 0 pending, 0 conflicts\n", first
        assert syncctl(setup, "delete", "posts", "1").returncode == 0
        line = proc.line()
        assert line.split(" ", 1)[1] == "posts local: 1 record, 1 pending, 0 conflicts\n", line   # the local view
    finally:
        proc.stop()


def test_watch_reports_a_new_listing_even_when_a_push_failed(writable, setup, server):
    proc = Watch(setup, "--json")
    try:
        assert json.loads(proc.line())["event"] == "current"
        server.fault("posts", kind="status", status=500, method="POST")      # this record's push fails
        r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                           input=json.dumps({"id": "x1", "title": "Local"}), capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert json.loads(proc.line())["event"] == "local"
        server.set_records("posts", POSTS + [{"id": 5}])                      # while the listing changes
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 1   # the push failed...
        event = json.loads(proc.line())
        while event["event"] == "local":                                       # (a retried push's own notices)
            event = json.loads(proc.line())
        assert (event["event"], event["records"]) == ("saved", 4)             # ...yet the new listing is announced
        assert event["pending"] == 1                                          # (3 on the server and x1, pending)
        assert event["savedAt"] == setup.cache_doc("posts")["savedAt"]
    finally:
        proc.stop()


def test_reload_waits_and_reports_a_rejected_configuration(running, setup, server):
    server.set_records("users", [{"id": "u"}])
    setup.add_source("users", server.url("users"))
    r = syncctl(setup, "reload")
    assert r.returncode == 0, r.stderr
    running.wait_log("users: synced 1 record ")
    (setup.config / "syncd.conf.d").mkdir()
    (setup.config / "syncd.conf.d" / "50-bad.conf").write_text("[Retry]\nMaxAttempts=many\n")
    r = syncctl(setup, "reload")
    assert r.returncode == 1
    assert r.stderr.startswith("syncctl: reload failed, the old configuration stays in force: ")
    assert "50-bad.conf:2: MaxAttempts: invalid number" in r.stderr
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert [s["name"] for s in status["sources"]] == ["posts", "users"]
    assert "50-bad.conf:2: MaxAttempts" in status["daemon"]["reloadRejected"]


def test_logout_cancels_in_flight_work_and_discards_late_responses(server, setup, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), TimeoutSec="30s")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.set_records("posts", POSTS + [{"id": 9}])
    server.fault("posts", kind="stall", seconds=4)
    assert syncctl(setup, "refresh", "posts").returncode == 0
    wait_for(lambda: len(server.requests("/posts")) >= 2, what="the slow request")
    r = syncctl(setup, "logout")
    assert r.returncode == 0, r.stderr
    assert not setup.cache_file("posts").exists()
    assert not (setup.state / "default" / "state.db").exists() or \
        json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]["records"] == 0
    time.sleep(5)   # the stalled response would have arrived by now
    assert not setup.cache_file("posts").exists(), "a response for the logged-out account was written"
    assert "Logged out" in d.output()


def test_refresh_with_more_streams_progress(server, setup, daemons):
    import varlink
    records = [{"id": i, "body": "x" * 500} for i in range(20000)]
    server.set_records("big", records)
    setup.add_source("big", server.url("big"))
    d = daemons(setup)
    d.wait_log("big: synced 20000 records")
    server.set_records("big", records + [{"id": "new"}])
    server.fault("big", kind="body", body=json.dumps(records + [{"id": "new"}]), times=0)
    updates = []
    with varlink.Client(address=f"unix:{setup.runtime / 'io.syncd.Manager'}") as client:
        with client.open("io.syncd.Manager") as manager:
            for reply in manager.Refresh("big", True, _more=True):
                updates.append(reply)
    assert updates[-1]["result"] == "updated" and updates[-1]["records"] == 20001
    progress = [u for u in updates[:-1] if u.get("state") == "syncing"]
    assert progress, updates
    assert all(u["bytes"] > 0 and u["pages"] == 1 for u in progress)
    assert [u["records"] for u in progress] == sorted(u["records"] for u in progress)


def test_every_command_help_ends_with_the_same_global_options():
    top = subprocess.run([str(BIN / "syncctl"), "--help"], capture_output=True, text=True, timeout=30).stdout
    commands = top.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in commands.splitlines()]
    block = "Global options:\n" + top.split("Global options:\n", 1)[1].split("\n\n", 1)[0] + "\n"
    assert "--version" in block and "--help" in block
    for name in names:
        r = subprocess.run([str(BIN / "syncctl"), name, "--help"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, (name, r.stderr)
        assert r.stdout.endswith(block), (name, r.stdout)


def test_an_unknown_source_points_to_status(running, setup):
    for args in (("get", "nosuch", "1"), ("list", "nosuch"), ("refresh", "nosuch"), ("changes", "nosuch")):
        r = syncctl(setup, *args)
        assert (r.returncode, r.stdout) == (1, ""), args
        assert r.stderr == "syncctl: no such source: nosuch; 'syncctl status' lists the configured sources\n", r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS
    # A near miss is named, as syncctl status does.
    for args in (("get", "post", "1"), ("list", "postz"), ("outbox", "Posts"), ("refresh", "post", "--wait"),
                 ("changes", "post", "--since", "1")):
        r = syncctl(setup, *args)
        assert (r.returncode, r.stdout) == (1, ""), args
        assert r.stderr == f"syncctl: no such source: {args[1]}; did you mean 'posts'?\n", r.stderr


def test_logout_says_what_it_erased(running, setup):
    r = syncctl(setup, "logout")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout == "Logged out of account default: erased the cache and state of 1 source (2 cached records)\n"
    assert not setup.cache_file("posts").exists()


@pytest.fixture
def two_sources(server, setup, daemons):
    """posts (read-only, 2 records) and notes (Writable=yes, Pagination=link; the server refuses every create
    with 422, so a create is parked), both synced."""
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Network]\nReachabilityIntervalSec=0\n")
    server.set_records("posts", POSTS)
    server.set_records("notes", [{"id": 5, "text": "five"}])
    setup.add_source("posts", server.url("posts"))
    setup.add_source("notes", server.url("notes"), Writable="yes", Pagination="link")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    d.wait_log("notes: synced 1 record")
    wait_for(lambda: _state(setup, "posts") == "idle" and _state(setup, "notes") == "idle", what="both sources idle")
    return d


def _state(setup, name):
    r = syncctl(setup, "status", "--json")
    if r.returncode != 0:
        return None
    return next((s["state"] for s in json.loads(r.stdout)["sources"] if s["name"] == name), None)


def _source_json(setup, name):
    return next(s for s in json.loads(syncctl(setup, "status", "--json").stdout)["sources"] if s["name"] == name)


def _expect_lines(text, expected):
    """`expected` are the exact lines, except that a `(… ago)` at the end of a line is matched as any age."""
    lines = text.splitlines()
    assert len(lines) == len(expected), text
    for line, want in zip(lines, expected):
        if want.endswith(" ago)"):
            head = want[:want.rindex(" (")]
            assert line.startswith(head + " (") and line.endswith(" ago)"), (line, want)
            age = line[len(head) + 2:-len(" ago)")]
            assert age[:-1].isdigit() and age[-1] == "s" or age.endswith("min"), (line, want)
        else:
            assert line == want, (line, want)


def _detail(setup, server, name, records, mode, outbox):
    """The expected lines of `syncctl status NAME` for an idle source that synced, times from its status."""
    source = _source_json(setup, name)
    return [
        f"● {name} — idle",
        f"         URL: {server.url(name)}",
        f"     Records: {records}",
        f"Last success: {source['lastSuccess']} (1s ago)",
        f"Last attempt: {source['lastAttempt']} (1s ago)",
        "       Error: none",
        "    Next try: at the next periodic refresh",
        f"        Mode: {mode}",
        f"  Cache file: {setup.cache_file(name)}",
        f"      Change: {source['seq']} (syncctl changes {name} --since {source['seq']} lists what follows)",
    ] + [f"      Outbox: {outbox[0]}"] + [" " * 14 + line for line in outbox[1:]]


def test_status_of_one_source_shows_it_in_full(two_sources, setup, server):
    posts = _source_json(setup, "posts")
    r = syncctl(setup, "status", "posts")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    _expect_lines(r.stdout, _detail(setup, server, "posts", "2 cached, 0 pending, 0 parked, 0 conflicts",
                                    "read-only, Pagination=none", ["empty"]))
    # The cache file it names is the one that holds the records.
    assert json.loads(Path(posts["cacheFile"]).read_bytes())["records"] == POSTS


def test_status_of_a_writable_source_summarises_its_outbox(two_sources, setup, server):
    server.fault("notes", kind="status", status=422, method="POST", body="title is required",
                 contentType="text/plain")
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "notes", "-"],
                       input='{"text": "new"}', capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    local_id = r.stdout.strip()
    syncctl(setup, "refresh", "notes", "--wait")
    wait_for(lambda: _source_json(setup, "notes")["parked"] == 1, what="the create parked")
    entry = json.loads(syncctl(setup, "outbox", "notes", "--json").stdout)[0]
    r = syncctl(setup, "status", "notes")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    # The refused create is not in the local view: a parked change waits for a person (syncctl(1), outbox).
    # The parked create is in the cache file apps read, and so in the count (docs/local-changes.md).
    _expect_lines(r.stdout, _detail(setup, server, "notes", "2 cached, 1 pending, 1 parked, 0 conflicts",
                                    "writable (ConflictPolicy=server-wins), Pagination=link",
                                    ["1 change (1 parked); 'syncctl outbox notes' lists them",
                                     f"parked create of {local_id} (outbox {entry['seq']}): {entry['lastError']}"]))
    assert entry["lastError"] == f"HTTP 422 from POST {server.url('notes')}: title is required"
    # Nothing was lost: the refused create stays in the outbox and the cache file.
    assert [(e["id"], e["state"]) for e in json.loads(syncctl(setup, "outbox", "--json").stdout)] == [(local_id, "parked")]
    assert server.records("notes") == [{"id": 5, "text": "five"}]


def test_status_of_several_sources_and_json(two_sources, setup):
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    by_name = {s["name"]: s for s in status["sources"]}
    assert by_name["posts"]["cacheFile"] == str(setup.cache_file("posts"))
    assert (by_name["notes"]["writable"], by_name["notes"]["pagination"], by_name["notes"]["conflictPolicy"]) == \
        (True, "link", "server-wins")
    assert (by_name["posts"]["writable"], by_name["posts"]["pagination"], by_name["posts"]["conflictPolicy"]) == \
        (False, "none", None)
    # Each name in turn, in the order given, a blank line between them.
    both = syncctl(setup, "status", "notes", "posts")
    assert both.returncode == 0, both.stderr
    blocks = both.stdout.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["● notes — idle", "● posts — idle"]
    # The same block, but for how long ago: a second may pass between the two commands.
    ago = lambda text: re.sub(r"\(\d+s ago\)", "(…s ago)", text)
    assert ago(blocks[0] + "\n") == ago(syncctl(setup, "status", "notes").stdout)
    # --json: the source's object, or an array of them for several names.
    one = syncctl(setup, "status", "posts", "--json")
    assert one.returncode == 0 and json.loads(one.stdout)["name"] == "posts"
    assert set(json.loads(one.stdout)) == set(by_name["posts"])
    several = syncctl(setup, "status", "--json", "posts", "notes")
    assert [s["name"] for s in json.loads(several.stdout)] == ["posts", "notes"]
    # Without a name the overview is unchanged.
    overview = syncctl(setup, "status").stdout.splitlines()
    assert overview[0].startswith("● syncd — online (links: ") and "Cache file" not in "\n".join(overview)


def test_status_of_an_unknown_source_suggests_the_nearest_name(two_sources, setup):
    r = syncctl(setup, "status", "postz")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "syncctl: no such source: postz; did you mean 'posts'?\n")
    r = syncctl(setup, "status", "Notes", "--json")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "syncctl: no such source: Notes; did you mean 'notes'?\n")
    r = syncctl(setup, "status", "weather")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "syncctl: no such source: weather; 'syncctl status' lists the configured sources\n"
    # The known ones are shown, every unknown one named, exit 1.
    r = syncctl(setup, "status", "posts", "postz", "nots")
    assert r.returncode == 1 and r.stdout.splitlines()[0] == "● posts — idle"
    assert r.stderr == "syncctl: no such source: postz; did you mean 'posts'?\n" \
                       "syncctl: no such source: nots; did you mean 'notes'?\n"
    # Asking changed nothing.
    assert setup.cache_doc("posts")["records"] == POSTS


def test_status_of_one_source_for_an_unprivileged_user(shared, running, setup):
    r = syncctl(setup, "status", "posts", as_user=shared)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "● posts — idle" and lines[-1] == "      Outbox: empty"
