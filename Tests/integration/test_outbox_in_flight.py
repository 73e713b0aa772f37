"""A change made while an earlier change of its record is out (docs/local-changes.md, "Changes made while one
is out"): it is queued after that change, never merged into it, so a create whose answer was lost (a timeout,
or SIGTERM while the POST was out) cannot take the newer content with it when the listing settles it. The test
server's own records and request log are the evidence."""
import json
import subprocess

from conftest import BIN, wait_for
from test_syncctl import syncctl


def put(setup, record):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "e", "-"],
                          input=json.dumps(record), capture_output=True, text=True, timeout=30)


def source_e(setup, server, **keys):
    setup.write_main("[Network]\nDebounceSec=200ms\nReachabilityIntervalSec=0\n")
    server.set_records("e", [{"id": 1, "title": "e1"}])
    setup.add_source("e", server.url("e"), Writable="yes", **keys)


def socket_up(setup):
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")


def posts_of_70(server):
    return [json.loads(q["body"]) for q in server.requests("/e") if q["method"] == "POST"]


def server_has_70(server):
    return [r for r in server.records("e") if r["id"] == 70]


def second_put_then_refresh(setup, server):
    """The create of 70 ("first") is on the server, its answer lost; listings fail until the second put is queued."""
    r = put(setup, {"id": 70, "title": "second"})
    assert r.returncode == 0, r.stderr
    entries = json.loads(syncctl(setup, "outbox", "--json").stdout)
    assert [(e["operation"], e["state"]) for e in entries] == [("create", "queued"), ("update", "queued")]
    assert json.loads(syncctl(setup, "get", "e", "70").stdout)["title"] == "second"
    server.clear_fault("e")
    server.options("e")
    assert syncctl(setup, "refresh", "e", "--wait").returncode == 0
    wait_for(lambda: server_has_70(server) == [{"id": 70, "title": "second"}], timeout=10, what="the newer content on the server")
    assert [p["title"] for p in posts_of_70(server)] == ["first"]          # created once, never twice
    assert [json.loads(q["body"])["title"] for q in server.requests("/e/70") if q["method"] == "PUT"] == ["second"]
    # The update went out after that refresh's listing: the next listing confirms it.
    assert syncctl(setup, "refresh", "e", "--wait").returncode == 0
    wait_for(lambda: json.loads(syncctl(setup, "outbox", "--json").stdout) == [], timeout=10, what="the outbox to empty")
    wait_for(lambda: setup.cache_doc("e")["pending"] == [], what="nothing pending")
    assert {"id": 70, "title": "second"} in setup.cache_doc("e")["records"]


def test_a_put_after_a_create_that_timed_out_reaches_the_server(server, setup, daemons):
    source_e(setup, server, TimeoutSec="1s")
    d = daemons(setup)
    d.wait_log("e: synced 1 record")
    socket_up(setup)
    server.options("e", writeDelay=2)                      # stored after 2 s; syncd gave up after 1 s
    server.fault("e", kind="status", status=503, method="GET")
    assert put(setup, {"id": 70, "title": "first"}).returncode == 0
    wait_for(lambda: server_has_70(server), timeout=10, what="the server to store the first create")
    assert "Operation timed out" in d.output() or "timed out" in d.output().lower()
    second_put_then_refresh(setup, server)


def test_a_put_after_a_create_cut_off_by_a_restart_reaches_the_server(server, setup, daemons):
    source_e(setup, server)
    d = daemons(setup)
    d.wait_log("e: synced 1 record")
    socket_up(setup)
    server.options("e", writeDelay=3)
    server.fault("e", kind="status", status=503, method="GET")
    assert put(setup, {"id": 70, "title": "first"}).returncode == 0
    wait_for(lambda: posts_of_70(server), timeout=10, what="the POST to arrive")
    assert d.stop() == 0                                   # SIGTERM while the POST is out
    wait_for(lambda: server_has_70(server), timeout=10, what="the server to store the first create")
    d2 = daemons(setup)
    socket_up(setup)
    d2.wait_log("e: refresh failed")                       # the listing still fails: nothing settled yet
    second_put_then_refresh(setup, server)
