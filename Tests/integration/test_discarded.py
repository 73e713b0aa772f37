"""No policy drops a change silently (docs/local-changes.md, "Discarded changes"): a change ConflictPolicy=server-wins
discards is logged at warning priority, listed by `syncctl outbox --discarded` with its body and the server's, and
`syncctl outbox --restore SEQ` queues it again; the next refresh pushes it."""
import json
import os
import subprocess

from conftest import BIN, POSTS, wait_for
from test_outbox import V1, V2, outbox_entries, put, start, writable, writes
from test_syncctl import syncctl

LOCAL = {"id": 1, "title": "local edit", "version": V1}
SERVER = {"id": 1, "title": "server edit", "version": V2}


def once_on_a_journal_stream(setup, log):
    """`syncd --once` with stderr on a journal stream of its own, so that every line carries its `<N>` priority."""
    with open(log, "w") as f:
        info = os.fstat(f.fileno())
        env = dict(os.environ, JOURNAL_STREAM=f"{info.st_dev}:{info.st_ino}")
        env.pop("NOTIFY_SOCKET", None)
        r = subprocess.run([str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"], stdout=f, stderr=f, env=env,
                           timeout=60)
    return r.returncode, log.read_text().splitlines()


def discarded(setup):
    r = syncctl(setup, "outbox", "--discarded", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_change_server_wins_discards_is_listed_logged_as_a_warning_and_restored(server, setup, daemons, tmp_path):
    writable(setup, server, policy="server-wins")
    d = start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, LOCAL).returncode == 0
    seq = outbox_entries(setup)[0]["seq"]
    d.stop()
    # Meanwhile someone else changed record 1 on the server.
    server.set_records("posts", [SERVER, dict(POSTS[1], version=V1)])
    server.clear_fault("posts")
    server.clear_requests()

    status, lines = once_on_a_journal_stream(setup, tmp_path / "once.log")
    assert status == 0, lines
    assert ("PUT", "/posts/1") not in writes(server)
    assert [line for line in lines if "conflict on 1" in line] == [
        f"<4>posts: conflict on 1 (the server's version is {V2}, the change was made against {V1}); dropped the local update "
        f"(ConflictPolicy=server-wins); kept as discarded change {seq} for 4w 2d (DiscardedRetentionSec=): "
        f"'syncctl outbox --restore {seq}' queues it again"]

    d2 = daemons(setup)
    d2.wait_log("Started")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert outbox_entries(setup) == []
    listed = discarded(setup)
    assert len(listed) == 1
    entry = listed[0]
    assert entry == {"seq": seq, "source": "posts", "id": "1", "operation": "update", "record": LOCAL, "baseVersion": V1,
                     "createdAt": entry["createdAt"], "discardedAt": entry["discardedAt"],
                     "reason": f"the server's version is {V2}, the change was made against {V1}; dropped the local update "
                               "(ConflictPolicy=server-wins)",
                     "server": SERVER, "serverVersion": V2}
    assert entry["createdAt"] <= entry["discardedAt"]
    table = syncctl(setup, "outbox", "--discarded")
    assert table.returncode == 0, table.stderr
    rows = table.stdout.splitlines()
    assert rows[0].split() == ["SEQ", "SOURCE", "ID", "OPERATION", "DISCARDED", "REASON"]
    assert rows[1].split()[:5] == [str(seq), "posts", "1", "update", entry["discardedAt"]]
    assert rows[1].endswith(entry["reason"])
    assert rows[2:] == ["", "1 discarded change listed."]

    # An unknown number: a clear message, exit 1, and nothing changed.
    cache_before = setup.cache_file("posts").read_bytes()
    r = syncctl(setup, "outbox", "--restore", "999")
    assert r.returncode == 1
    assert r.stderr == ("syncctl: no discarded change 999 (restored already, or kept no longer than DiscardedRetentionSec=); "
                        "'syncctl outbox --discarded' lists them\n")
    assert r.stdout == ""
    assert discarded(setup) == listed
    assert outbox_entries(setup) == []
    assert setup.cache_file("posts").read_bytes() == cache_before

    # Restored while the server refuses writes: the cache shows it pending at once, against the server's version.
    server.fault("posts", kind="status", status=503, method="PUT")
    r = syncctl(setup, "outbox", "--restore", str(seq))
    assert r.returncode == 0, r.stderr
    queued = outbox_entries(setup)
    assert [(e["id"], e["operation"]) for e in queued] == [("1", "update")] and queued[0]["seq"] > seq
    assert r.stdout == (f"Restored discarded change {seq} as outbox entry {queued[0]['seq']}: the update of 1 in posts is pushed "
                        "at the next refresh.\n")
    assert discarded(setup) == []
    rebased = dict(LOCAL, version=V2)
    doc = setup.cache_doc("posts")
    assert doc["pending"] == [1] and doc["records"][0] == rebased

    server.clear_fault("posts")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    bodies = [json.loads(r["body"]) for r in server.requests() if (r["method"], r["path"]) == ("PUT", "/posts/1")]
    assert bodies and all(body == rebased for body in bodies)
    assert server.records("posts")[0] == rebased
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], what="the restored change to be confirmed")
    assert outbox_entries(setup) == [] and discarded(setup) == []
