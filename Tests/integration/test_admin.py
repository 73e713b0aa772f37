"""Failures an admin can see: a broken .source file disables that source only (at start and at reload)
and is listed by `syncctl status`; a rejected reload shows until a good one; configuration errors are at
error priority (`<3>` on the journal's stream); a daemon that never answers makes syncctl give up."""
import json
import os
import signal
import socket
import subprocess

from conftest import BIN, POSTS, wait_for


def syncctl(setup, *args, env=None):
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.update(env or {})
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), *args],
                          capture_output=True, text=True, timeout=30, env=full_env)


def status(setup):
    r = syncctl(setup, "status", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def write_bad_entries(setup):
    """A file with an unknown key, one whose name is not UTF-8, a dangling link."""
    sources = setup.config / "sources.d"
    (sources / "broken.source").write_text("[Source]\nURL=http://localhost/x\nTimeoutSec=5 parsecs\n")
    with open(os.path.join(os.fsencode(sources), b"caf\xe9.source"), "w") as f:
        f.write("[Source]\nURL=http://localhost/y\n")
    os.symlink(setup.dir / "nowhere.source", sources / "gone.source")


def test_a_broken_source_is_skipped_at_start_and_listed(server, setup, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    write_bad_entries(setup)
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    src = setup.config / "sources.d"
    log = d.output()
    # Each problem at error priority with FILE:LINE, then what it means for that source.
    assert f"error: {src}/broken.source:3: TimeoutSec: invalid time span \"5 parsecs\"" in log
    assert f"error: {src}/caf\\xe9.source: file name is not valid UTF-8" in log
    assert f"error: {src}/gone.source: cannot read: dangling symbolic link: its target \"{setup.dir}/nowhere.source\"" in log
    assert "error: broken: not loaded because of the configuration error above; the other sources run." in log
    # The good source ran: the server saw its request and the cache holds the server's records.
    assert server.requests("/posts")
    assert setup.cache_doc("posts")["records"] == POSTS
    st = status(setup)
    assert [s["name"] for s in st["sources"]] == ["posts"]
    assert [(f["name"], f["file"]) for f in st["failed"]] == [
        ("broken", f"{src}/broken.source"), ("caf\\xe9", f"{src}/caf\\xe9.source"), ("gone", f"{src}/gone.source")]
    assert st["failed"][0]["problem"].startswith(f"{src}/broken.source:3: TimeoutSec: invalid time span")
    human = syncctl(setup, "status")
    assert human.returncode == 0
    assert f"× broken   failed: {src}/broken.source:3: TimeoutSec: invalid time span \"5 parsecs\"" in human.stdout
    # --check-config still refuses the set and prints every problem.
    check = setup.syncd("--check-config")
    assert check.returncode == 1 and check.stdout == ""
    assert len(check.stderr.splitlines()) == 3, check.stderr


def test_reload_skips_a_broken_source_and_shows_a_rejected_reload(server, setup, daemons):
    server.set_records("posts", POSTS)
    server.set_records("comments", [{"id": "c1"}])
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    # A new good source and a new broken one: the reload succeeds, runs the good one, lists the broken one.
    setup.add_source("comments", server.url("comments"))
    (setup.config / "sources.d" / "users.source").write_text("[Source]\nURL=ftp://example.org/users\n")
    r = syncctl(setup, "reload")
    assert (r.returncode, r.stderr) == (0, "")
    d.wait_log("comments: synced 1 record")
    st = status(setup)
    assert [s["name"] for s in st["sources"]] == ["comments", "posts"]
    assert [f["name"] for f in st["failed"]] == ["users"]
    assert st["daemon"]["reloadRejected"] is None
    assert "error: users: not loaded because of the configuration error above" in d.output()

    # A broken syncd.conf: the reload is rejected, the old configuration (both sources, the failed list) stays,
    # and status says so until a good reload.
    good_main = (setup.config / "syncd.conf").read_text()
    (setup.config / "syncd.conf").write_text(good_main + "[Refresh]\nIntervalSec=1ns\n")
    r = syncctl(setup, "reload")
    assert r.returncode == 1
    assert "IntervalSec: 1ns is below the minimum of 10s; use at least 10s" in r.stderr
    line = f"{setup.config}/syncd.conf:7: IntervalSec: 1ns is below the minimum of 10s; use at least 10s"
    assert f"error: {line}" in d.output()
    st = status(setup)
    assert st["daemon"]["reloadRejected"] == line
    assert [s["name"] for s in st["sources"]] == ["comments", "posts"]
    human = syncctl(setup, "status")
    assert f"    reload rejected, previous configuration kept: {line}\n" in human.stdout
    (setup.config / "syncd.conf").write_text(good_main)
    (setup.config / "sources.d" / "users.source").unlink()
    assert syncctl(setup, "reload").returncode == 0
    st = status(setup)
    assert st["daemon"]["reloadRejected"] is None and st["failed"] == []
    assert "reload rejected" not in syncctl(setup, "status").stdout
    # Nothing was lost on the way: both caches hold the server's records.
    assert setup.cache_doc("posts")["records"] == POSTS
    assert setup.cache_doc("comments")["records"] == [{"id": "c1"}]


def test_configuration_errors_at_start_are_at_error_priority_on_the_journal_stream(setup):
    """With $JOURNAL_STREAM naming stderr and no journald to take native entries, lines carry `<3>`."""
    (setup.config / "syncd.conf").write_text("[Daemon]\nAccount=..\n")
    read_end, write_end = os.pipe()
    info = os.fstat(write_end)
    env = dict(os.environ, JOURNAL_STREAM=f"{info.st_dev}:{info.st_ino}")
    env.pop("NOTIFY_SOCKET", None)
    proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config)], stderr=write_end,
                            stdout=subprocess.DEVNULL, env=env)
    os.close(write_end)
    # EX_CONFIG (syncd(8) EXIT STATUS): the units do not restart into the same error.
    assert proc.wait(timeout=30) == 78
    with os.fdopen(read_end) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith(f"<3>{setup.config}/syncd.conf:2: Account: invalid account \"..\"")
    assert lines[-1] == (f"<3>Failed to load the configuration from {setup.config}; fix it (see 'syncd --check-config'), "
                         "then start syncd again")
    assert setup.cache.exists() is False  # refused before touching anything


def test_syncctl_gives_up_on_a_daemon_that_never_answers(tmp_path):
    path = str(tmp_path / "hung.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    accepted = []
    try:
        proc = subprocess.Popen([str(BIN / "syncctl"), "--socket", path, "--timeout=1", "status"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        conn, _ = listener.accept()      # accept, read the call, never answer
        accepted.append(conn)
        assert b"GetStatus" in conn.recv(4096)
        # It gives up on its own (the daemon never answers, nor closes): told so, exit 3.
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 3
        assert out == ""
        assert err == (f"syncctl: syncd did not answer within 1s ({path}); it may be busy or hung. "
                       "See 'journalctl -u syncd', or wait longer with --timeout=SEC (0 waits for ever).\n")
        # The same for bare `syncctl` (it shows the status).
        proc = subprocess.run([str(BIN / "syncctl"), "--socket", path, "--timeout=0.5"], capture_output=True, text=True,
                              timeout=20)
        assert proc.returncode == 3 and "did not answer within 0.5s" in proc.stderr
    finally:
        for conn in accepted:
            conn.close()
        listener.close()


def test_once_runs_the_good_sources_and_fails_for_a_broken_one(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    (setup.config / "sources.d" / "broken.source").write_text("[Source]\nURL=http://localhost/x\nX-Note=fine\nBogus=1\n")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert f"error: {setup.config}/sources.d/broken.source:4: unknown key \"Bogus\" in [Source]" in r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS
    assert len(server.requests("/posts")) == 1


def test_no_thread_asks_for_a_higher_priority(server, setup, tmp_path):
    """No dispatch source, so libdispatch's manager thread (which asks for nice -4 and logs
    'Failed to set thread priority … errno=13' when unprivileged) never starts."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    trace = tmp_path / "trace"
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    env.pop("NOTIFY_SOCKET", None)
    proc = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=setpriority", "-o", str(trace),
                             str(BIN / "syncd"), "--config-dir", str(setup.config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for(lambda: setup.cache_file("posts").exists(), timeout=20, what="the first refresh")
        wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
        assert syncctl(setup, "reload").returncode == 0      # exercises the signal-free control path too
        os.kill(proc.pid, 0)
    finally:
        # Stop syncd itself (strace's child); strace then exits with it.
        children = open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()
        for child in children:
            os.kill(int(child), signal.SIGTERM)
        proc.wait(timeout=20)
    calls = trace.read_text().splitlines()
    assert calls, "strace saw the worker threads start"
    assert not [c for c in calls if "setpriority(PRIO_PROCESS, 0, -" in c], calls
