"""Hostile local users on the control socket (it is 0666 by design): one user's idle connections never
lock root out, they are closed after the timeouts syncd(8) states, and a refused client is told why.

The unprivileged side runs Debian's own /usr/bin/python3 (stdlib sockets only) and syncctl as "nobody" or as
other unprivileged UIDs, from the another_user fixture's folder, which those users can reach."""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, HERE, POSTS, wait_for
from test_syncctl import Watch

SYSTEM_PYTHON = "/usr/bin/python3"
# Defaults of ControlConnectionPolicy, as docs/syncd.8.md states them.
PER_USER = 16
SHARE = 256 - 64
CALL_TIMEOUT = 10


@pytest.fixture
def reachable(setup, another_user):
    """The daemon's runtime folder and the client script in the another_user fixture's folder."""
    another_user.file(HERE / "clients" / "hold_connections.py")
    setup.runtime = another_user.folder / "run"
    setup.write_main()
    return another_user


@pytest.fixture
def served(reachable, running):
    """conftest's running daemon, with its socket in the reachable folder (this fixture's first argument sets it up first)."""
    return running


@pytest.fixture
def served_closes_logged(reachable, server, setup, daemons):
    """As `served`, with debug logging: a connection closed by a timeout is logged (at debug) with the reason."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, env={"SYNCD_LOG_LEVEL": "debug"})
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def socket_path(setup):
    return str(setup.runtime / "io.syncd.Manager")


def syncctl(setup, *args, runner=None, **who):
    """syncctl on the test's daemon; as another user (`user=` or `uid=`) through `runner` (AnotherUser)."""
    cmd = [BIN / "syncctl", "--socket", socket_path(setup), *args]
    env = dict(os.environ, NO_COLOR="1")
    if runner:
        return runner.run(cmd, **who, capture_output=True, text=True, timeout=30, env=env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=env)


def start_holder(setup, runner, count, wait, callers="first", *until, **who):
    """Starts hold_connections.py as an unprivileged user (`user=` or `uid=`)."""
    return runner.popen([SYSTEM_PYTHON, runner.folder / "hold_connections.py", socket_path(setup), count, wait, callers,
                         *until], **who, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"PATH": "/usr/bin:/bin"})


def first_report(proc):
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return json.loads(line)


def holder(setup, runner, count, wait, callers="first", *until, **who):
    """Starts hold_connections.py as an unprivileged user; returns the process and its first report."""
    proc = start_holder(setup, runner, count, wait, callers, *until, **who)
    return proc, first_report(proc)


def test_idle_connections_of_one_user_never_lock_root_out_and_are_closed_after_the_timeouts(served_closes_logged, setup,
                                                                                           server, reachable):
    served = served_closes_logged
    watch = Watch(setup, "--json")                       # root's stream: it is read, so it never times out
    try:
        assert json.loads(watch.line())["event"] == "current"
        # Waits until every connection that never called is closed (generously past the call timeout).
        proc, opened = holder(setup, reachable, 300, CALL_TIMEOUT + 30, "first", "silent", user="nobody")
        try:
            # One user gets its share, no more; each refused connection was told why, not just closed.
            assert opened["admitted"] == PER_USER, opened
            assert opened["refused"] == 300 - PER_USER
            refusal = json.loads(opened["refusal"])
            assert refusal["error"] == "io.syncd.Manager.TooManyConnections"
            assert "already holds 16 control connections" in refusal["parameters"]["reason"]

            # Root (what ExecReload= runs) is served meanwhile.
            r = syncctl(setup, "status")
            assert r.returncode == 0 and "posts" in r.stdout, r.stderr
            r = syncctl(setup, "reload")
            assert r.returncode == 0, r.stderr

            # The same user's syncctl says what happened, with exit status 3 (not answering).
            r = syncctl(setup, "status", runner=reachable, user="nobody")
            assert r.returncode == 3, (r.stdout, r.stderr)
            assert r.stderr == ("syncctl: syncd refused the connection: this user already holds 16 control connections, "
                                "the most one unprivileged user may. Try again when fewer are open (idle ones are closed "
                                "within a minute)\n"), r.stderr
            assert "did it stop or restart" not in r.stderr

            # Logged once for the user, with the reason, however many were refused.
            assert served.output().count("Refused control connection of") == 1, served.output()
            assert "uid 65534" in served.output() and "already holds 16 control connections" in served.output()

            out, err = proc.communicate(timeout=CALL_TIMEOUT + 60)
        finally:
            if proc.poll() is None:
                proc.kill()
        closed = json.loads(out)
        # Connections that never sent a call were closed by the daemon, each for that reason; the one that
        # called GetStatus and then went idle has the longer idle timeout, so it was still open then (it closed
        # with the holder). How long each timeout is, is ControlConnectionPolicy's rule: ControlConnectionPolicyTests
        # aConnectionWithoutACallHasTheCallTimeout, anIdleConnectionBetweenCallsHasTheIdleTimeout; a Watch quiet
        # past the idle timeout is ControlConnectionTests.anEventQueuedOnALongQuietStreamIsGivenTheWholeIdleTimeoutToBeRead.
        assert len(closed["closed_after"]) == PER_USER - 1, (closed, err)
        assert (closed["caller_closed_after"], closed["still_open"], closed["callers_open"]) == ([], 1, 1), closed
        nobody = [l for l in served.output().splitlines() if "Closed control connection of " in l and " uid 65534 " in l]
        assert len(nobody) == PER_USER - 1, served.output()
        assert all(l.endswith(f": sent no complete call within {CALL_TIMEOUT} s") for l in nobody), nobody

        # Freed: the user is admitted again.
        r = syncctl(setup, "status", runner=reachable, user="nobody")
        assert r.returncode == 0, r.stderr

        # Root's Watch outlived the call timeout and still reports the next change.
        assert watch.proc.poll() is None
        server.set_records("posts", POSTS + [{"id": 3}])
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        event = json.loads(watch.line())
        assert (event["event"], event["records"]) == ("saved", 3)
    finally:
        watch.stop()


def test_unprivileged_users_together_leave_a_reserve_for_root(served, setup, reachable):
    users = SHARE // PER_USER                            # 12 users x 16 connections use up the unprivileged share
    holders = []
    try:
        # Every connection makes one call, so they stay for the idle timeout, longer than this test.
        holders = [start_holder(setup, reachable, PER_USER, 1, callers="all", uid=61000 + index) for index in range(users)]
        for index, proc in enumerate(holders):
            opened = first_report(proc)
            assert (opened["admitted"], opened["refused"]) == (PER_USER, 0), (index, opened)
        proc, opened = holder(setup, reachable, 1, 1, uid=61000 + users)
        holders.append(proc)
        assert (opened["admitted"], opened["refused"]) == (0, 1), opened
        assert "reserved for root" in json.loads(opened["refusal"])["parameters"]["reason"]

        # Root still gets in, and so does a call of the daemon's own kind: status, reload.
        r = syncctl(setup, "status")
        assert r.returncode == 0, r.stderr
        assert syncctl(setup, "reload").returncode == 0
        assert setup.cache_doc("posts")["records"] == POSTS
    finally:
        for proc in holders:
            proc.kill()
            proc.wait()


# Run by Debian's own Python as an unprivileged user: N connections that each send a message that is not
# JSON (a protocol error: syncd answers and drops them), or one well-formed call that ends normally.
FLOOD = r"""
import json, socket, sys
path, kind, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
answers = []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"not json\0" if kind == "garbage" else json.dumps({"method": "io.syncd.Manager.GetStatus"}).encode() + b"\0")
    data = b""
    while not data.endswith(b"\0"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    answers.append(json.loads(data.rstrip(b"\0")).get("error", "ok"))
    s.close()
print(json.dumps(answers))
"""


def flood(setup, runner, kind, count):
    r = runner.run([SYSTEM_PYTHON, "-c", FLOOD, socket_path(setup), kind, count], user="nobody",
                   capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_flood_of_dropped_connections_is_logged_once_per_user_until_one_ends_normally(served, setup, reachable):
    dropped = "Dropped control connection of "
    answers = flood(setup, reachable, "garbage", 40)
    assert answers == ["io.syncd.Manager.InvalidParameter"] * 40, answers       # each told why, then dropped
    served.wait_log(dropped, count=1)
    time.sleep(1)                                            # the other 39 drops were reaped by now
    assert served.output().count(dropped) == 1
    line = next(l for l in served.output().splitlines() if dropped in l)
    assert "protocol error" in line and "uid 65534" in line and "not logged until one ends normally" in line
    # Root's calls meanwhile are answered as ever.
    assert syncctl(setup, "status").returncode == 0
    # One of nobody's connections ends normally: the next drop is worth a line again.
    assert flood(setup, reachable, "status", 1) == ["ok"]
    assert flood(setup, reachable, "garbage", 5) == ["io.syncd.Manager.InvalidParameter"] * 5
    served.wait_log(dropped, count=2)
    time.sleep(1)
    assert served.output().count(dropped) == 2
    assert setup.cache_doc("posts")["records"] == POSTS
