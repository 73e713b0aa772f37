"""The long-running daemon: readiness, status, reload, stop (syncd(8) NOTIFICATIONS, GUARANTEES 1)."""
import json
import os
import pwd
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

from conftest import BIN, POSTS, Setup, wait_for


def test_ready_comes_before_any_network_even_when_the_server_is_unreachable(setup, notify, daemons):
    # Port 9 on loopback: nothing listens, every request fails.
    setup.add_source("posts", "http://127.0.0.1:9/posts")
    d = daemons(setup, notify=notify)
    notify.wait_for("READY=1")
    d.wait_log("refresh failed")
    status = [m for _, m in notify.drain() if "STATUS=" in m]
    assert any("stale" in m and "posts" in m for m in status), status
    assert d.stop() == 0


def test_cached_copy_is_served_before_the_first_refresh(server, setup, notify, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    server.fault("posts", kind="stall", seconds=5)
    d = daemons(setup, notify=notify)
    notify.wait_for("READY=1")
    # READY=1 was sent after the cache file was checked, while the refresh still stalls: apps read it meanwhile.
    # (The file is the only copy of the bodies: one an app deleted is fetched again, test_once_storage.py.)
    assert setup.cache_file("posts").read_bytes() == before
    d.stop()


def test_sigterm_stops_even_mid_transfer(server, setup, notify, daemons):
    # It ends while the server still holds the listing (30 s); the stop deadline is DaemonStateMachineTests'.
    server.set_records("posts", POSTS)
    server.fault("posts", kind="stall", seconds=30)
    setup.add_source("posts", server.url("posts"), TimeoutSec="60s")
    d = daemons(setup, notify=notify)
    notify.wait_for("READY=1")
    wait_for(lambda: server.requests("/posts"), what="the stalled request")
    d.signal(signal.SIGTERM)
    d.proc.wait(15)
    assert d.proc.returncode == 0
    notify.wait_for("STOPPING=1")
    assert not setup.leftovers()


def test_sighup_reload_adds_a_source_and_a_bad_reload_keeps_the_old_one(server, setup, notify, daemons):
    server.set_records("posts", POSTS)
    server.set_records("users", [{"id": "u1"}])
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, notify=notify)
    d.wait_log("posts: synced 2 records")
    setup.add_source("users", server.url("users"))
    d.signal(signal.SIGHUP)
    notify.wait_for("RELOADING=1")
    d.wait_log("users: synced 1 record ")
    reloading = next(m for _, m in notify.drain() if "RELOADING=1" in m)
    assert "MONOTONIC_USEC=" in reloading
    assert setup.cache_doc("users")["records"] == [{"id": "u1"}]
    # A broken syncd.conf is rejected; the old configuration keeps working. (A broken .source file only
    # disables its source: test_admin.py.)
    (setup.config / "syncd.conf.d").mkdir()
    (setup.config / "syncd.conf.d" / "50-bad.conf").write_text("[Network]\nDebounceSec=soon\n")
    d.signal(signal.SIGHUP)
    d.wait_log("50-bad.conf:2: DebounceSec: invalid time span")
    reason = (f"Reload failed (keeping previous configuration): {setup.config}/syncd.conf.d/50-bad.conf:2: "
              'DebounceSec: invalid time span "soon": expected a number at "soon"')
    notify.wait_for(reason)
    # The reason stays in STATUS= while the summary changes under it (a refresh: syncing, then up to date).
    notify.messages.clear()
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "refresh", "posts", "--wait"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: latest_status(notify) == reason + "; Online; 2 sources up to date", what="the summary after the refresh")
    changes = [status_of(m) for _, m in notify.messages if "STATUS=" in m]
    assert any("Syncing posts" in line for line in changes), changes
    assert all(line.startswith(reason + "; ") for line in changes), changes
    # Still running with the old "users" source: a manual trigger (another reload with a fixed file) works,
    # and a successful reload clears the reason.
    server.set_records("users", [{"id": "u1"}, {"id": "u2"}])
    (setup.config / "syncd.conf.d" / "50-bad.conf").unlink()
    setup.add_source("users", server.url("users"), TimeoutSec="10s")
    d.signal(signal.SIGHUP)
    d.wait_log("users: synced 2 records")
    wait_for(lambda: latest_status(notify) == "Online; 2 sources up to date", what="the summary without the reload failure")
    assert d.proc.poll() is None
    assert d.stop() == 0


def test_reload_that_removes_a_source_cancels_its_refresh_in_flight(server, setup, daemons):
    server.set_records("posts", POSTS)
    server.set_records("slow", [{"id": "s1"}])
    setup.add_source("slow", server.url("slow"), TimeoutSec="60s")
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("slow: synced 1 record ")
    d.wait_log("posts: synced 2 records")
    before = setup.cache_file("slow").read_bytes()
    # The next refresh of "slow" stalls for a minute after its first byte.
    server.fault("slow", kind="stall", seconds=60)
    server.clear_requests()
    syncctl = [str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager")]
    assert subprocess.run(syncctl + ["refresh", "slow"], capture_output=True, timeout=30).returncode == 0
    wait_for(lambda: server.requests("/slow"), what="the stalled request")
    (setup.config / "sources.d" / "slow.source").unlink()
    d.signal(signal.SIGHUP)
    d.wait_log("slow: removed from the configuration")
    d.wait_log("slow: refresh cancelled", timeout=15)        # while the server still holds it (60 s)
    # The daemon goes on with the sources it still has; the removed one's file stays until logout.
    r = subprocess.run(syncctl + ["refresh", "posts", "--wait"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    status = json.loads(subprocess.run(syncctl + ["status", "--json"], capture_output=True, text=True, timeout=30).stdout)
    assert [s["name"] for s in status["sources"]] == ["posts"]
    assert setup.cache_file("slow").read_bytes() == before
    assert d.proc.poll() is None
    assert d.stop() == 0


def status_of(message):
    return next(line[len("STATUS="):] for line in message.splitlines() if line.startswith("STATUS="))


def latest_status(notify):
    """The STATUS= systemd would show now: the last one sent."""
    return next((status_of(m) for _, m in reversed(notify.drain()) if "STATUS=" in m), None)


def test_log_lines_have_priority_prefixes_only_with_a_matching_journal_stream(server, setup, daemons, tmp_path):
    import os
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    log = tmp_path / "journal.log"
    with open(log, "w") as f:
        st = os.fstat(f.fileno())
        import subprocess
        from conftest import BIN
        p = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config)], stdout=f, stderr=f,
                             env=dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
        wait_for(lambda: "posts: synced" in log.read_text(), what="sync")
        p.send_signal(signal.SIGTERM)
        p.wait(10)
    lines = log.read_text().splitlines()
    assert lines and all(l.startswith("<") and l[2] == ">" for l in lines), lines
    assert any(l.startswith("<6>posts: synced 2 records") for l in lines)
    assert any(l.startswith("<5>Started") for l in lines)
    d = daemons(setup, env={"JOURNAL_STREAM": "1:2"})
    d.wait_log("Started")
    assert not d.output().startswith("<")


def test_watchdog_pings_only_for_its_own_pid(server, setup, notify, daemons, tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, notify=notify, env={"WATCHDOG_USEC": "1000000"})
    notify.wait_for("READY=1")
    # It keeps pinging while it runs (every half $WATCHDOG_USEC, Notifier.watchdogInterval: a rule of the
    # daemon's own, not measured here).
    wait_for(lambda: len([m for _, m in notify.drain() if m == "WATCHDOG=1"]) >= 4, what="four watchdog pings")
    assert d.stop() == 0
    # $WATCHDOG_PID naming another process: the watchdog is not ours, no pings.
    notify.messages.clear()
    d2 = daemons(setup, notify=notify, env={"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"})
    notify.wait_for("READY=1")
    time.sleep(1.5)
    assert not [m for _, m in notify.drain() if m == "WATCHDOG=1"]
    d2.stop()


def syncctl_status(setup):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "status", "--json"],
                          capture_output=True, text=True, timeout=30)


def test_a_second_syncd_on_the_same_state_exits_1_and_leaves_the_running_one_alone(server, setup, daemons, running):
    d = running
    socket_path = setup.runtime / "io.syncd.Manager"
    lock = setup.state / "syncd.lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert lock.read_text() == f"{d.proc.pid}\n"
    cache_before = setup.cache_file("posts").read_bytes()
    cache_inode = setup.cache_file("posts").stat().st_ino
    db_inode = setup.db().stat().st_ino
    socket_inode = socket_path.stat().st_ino
    server.clear_requests()
    held = f"another syncd is already using {setup.state} (pid {d.proc.pid}); stop it first (systemctl stop syncd)"

    second = setup.syncd(timeout=30)
    assert (second.returncode, second.stdout, second.stderr) == (1, "", f"error: Failed to start: {held}\n")
    once = setup.syncd("--once", timeout=30)
    assert (once.returncode, once.stdout, once.stderr) == (1, "", f"syncd: {held}\n")

    # Neither touched the network, the cache, the state or the control socket; the first still serves.
    assert server.requests("/posts") == []
    assert setup.cache_file("posts").read_bytes() == cache_before
    assert setup.cache_file("posts").stat().st_ino == cache_inode
    assert setup.db().stat().st_ino == db_inode
    assert sorted(p.name for p in (setup.state / "default").iterdir() if "corrupt" in p.name) == []
    assert socket_path.stat().st_ino == socket_inode
    assert lock.read_text() == f"{d.proc.pid}\n"
    status = syncctl_status(setup)
    assert status.returncode == 0, status.stderr
    assert '"records":2' in status.stdout.replace(" ", "")
    assert d.proc.poll() is None
    assert "error" not in d.output()
    # Once the first has stopped, the lock file stays (it is never deleted) and the next run takes it.
    assert d.stop() == 0
    assert lock.exists()
    assert setup.syncd("--once", timeout=30).returncode == 0


def test_a_lock_left_by_a_killed_daemon_does_not_block_the_next_one(server, setup, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    d.signal(signal.SIGKILL)
    d.proc.wait(10)
    lock = setup.state / "syncd.lock"
    assert lock.read_text() == f"{d.proc.pid}\n"
    # The kernel dropped the flock with the process; the stale pid in the file does not matter.
    d2 = daemons(setup)
    d2.wait_log("Started")
    wait_for(lambda: lock.read_text() == f"{d2.proc.pid}\n", what="the new pid in the lock file")
    assert syncctl_status(setup).returncode == 0
    assert d2.stop() == 0


def test_a_lock_file_its_owner_cannot_write_gets_its_mode_back(server, another_user):
    """A lock file of the service's user that a hand-made mode makes unwritable (0400): syncd, running as that
    user, gives it the lock file's mode 0600 and runs, as it does for any other existing lock file; root's runs
    never meet this (the mode does not stop root). Runs as "nobody" from the another_user fixture's folder."""
    server.set_records("posts", POSTS)
    nobody = pwd.getpwnam("nobody")
    folder = another_user.folder
    (folder / "etc" / "sources.d").mkdir(parents=True)
    (folder / "etc" / "syncd.conf").write_text(
        f"[Daemon]\nStateDirectory={folder}/state\nCacheDirectory={folder}/cache\nRuntimeDirectory={folder}/run\n")
    (folder / "etc" / "sources.d" / "posts.source").write_text(f"[Source]\nURL={server.url('posts')}\n")
    for path in (folder / "etc", folder / "etc" / "sources.d"):
        os.chmod(path, 0o755)
    for name in ("state", "cache", "run"):
        (folder / name).mkdir(mode=0o700)
        os.chown(folder / name, nobody.pw_uid, nobody.pw_gid)
    lock = folder / "state" / "syncd.lock"
    lock.write_text("12345\n")
    os.chown(lock, nobody.pw_uid, nobody.pw_gid)
    os.chmod(lock, 0o400)
    r = another_user.run([BIN / "syncd", "--once", "--config-dir", folder / "etc"], user="nobody",
                         capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "posts: synced 2 records" in r.stderr, r.stderr
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert (lock.stat().st_uid, re.fullmatch(r"[0-9]+\n", lock.read_text()) is not None) == (nobody.pw_uid, True)
    assert json.loads((folder / "cache" / "default" / "posts.json").read_text())["records"] == POSTS


def test_a_daemon_with_other_state_does_not_take_a_live_control_socket(server, setup, daemons, running, tmp_path):
    d = running
    socket_path = setup.runtime / "io.syncd.Manager"
    socket_inode = socket_path.stat().st_ino
    # A second configuration sharing only the runtime directory (a mistake): it may sync, but not take the socket.
    other = Setup(tmp_path / "other")
    other.runtime = setup.runtime
    other.write_main()
    other.add_source("posts", server.url("posts"))
    d2 = daemons(other)
    d2.wait_log("posts: synced 2 records")
    # The wrapped error says "Failed to" once.
    assert (f"error: Failed to open the control socket, continuing without syncctl access: "
            f"bind control socket {socket_path} (another process is still serving it): Address already in use") in d2.output()
    assert socket_path.stat().st_ino == socket_inode
    status = syncctl_status(setup)
    assert status.returncode == 0, status.stderr
    assert str(setup.state) not in status.stdout and d.proc.poll() is None
    # Stopping the second does not remove the first one's socket.
    assert d2.stop() == 0
    assert socket_path.stat().st_ino == socket_inode
    assert syncctl_status(setup).returncode == 0
    assert d.stop() == 0
