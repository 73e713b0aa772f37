"""The daemon's core against the real binary: every request answered, every stop ends mid-transfer
(docs/architecture.md, "The daemon's core"; DaemonStateMachineTests check the stop deadline itself). One scenario per test, each once a hang or a lost answer."""
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import BIN, POSTS, wait_for


def syncctl_cmd(setup, *args):
    return [str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), *args]


def syncctl(setup, *args, timeout=30):
    return subprocess.run(syncctl_cmd(setup, *args), capture_output=True, text=True, timeout=timeout)


def background(setup, *args):
    return subprocess.Popen(syncctl_cmd(setup, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def two_synced_sources(server, setup, daemons, **keys):
    server.set_records("s1", [{"id": "a"}])
    server.set_records("s2", [{"id": "b"}])
    setup.add_source("s1", server.url("s1"), TimeoutSec="60s", **keys)
    setup.add_source("s2", server.url("s2"), TimeoutSec="60s", **keys)
    d = daemons(setup)
    d.wait_log("s1: synced 1 record")
    d.wait_log("s2: synced 1 record")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def test_sigterm_during_refresh_wait_answers_the_client_and_stops_mid_transfer(server, setup, daemons):
    # The server holds both listings for 30 s: the daemon ends while it still does (how long the stop may take
    # is the core's stop deadline, DaemonStateMachineTests "scenario 1: a refresh that ignores its cancel ...").
    d = two_synced_sources(server, setup, daemons)
    server.fault("s1", kind="stall", seconds=30)
    server.fault("s2", kind="stall", seconds=30)
    server.clear_requests()
    client = background(setup, "refresh", "--wait")
    wait_for(lambda: server.requests("/s1") and server.requests("/s2"), what="both slow requests")
    d.signal(signal.SIGTERM)
    d.proc.wait(15)
    assert d.proc.returncode == 0, d.output()
    out, err = client.communicate(timeout=10)
    # A stopping daemon, said as such (not a storage failure), with the "not answering" status.
    assert (client.returncode, err) == (3, "syncctl: syncd is stopping; the refresh was not completed\n"), err
    log = d.output()
    assert "Stopped" in log
    # The final save ran: the refresh was cancelled in time, nothing was cut short.
    assert "did not end in time" not in log
    # s2 refreshed at the same time as s1, on a lane of its own (syncd(8) DESCRIPTION), and was cancelled
    # mid-stall like s1: neither listing was stored.
    assert len(server.requests("/s2")) == 1
    assert log.count("synced 1 record") == 2


def test_refresh_right_after_logout_is_answered_and_the_source_does_not_stay_syncing(server, setup, daemons):
    server.set_records("s1", [{"id": "a"}, {"id": "b"}])
    setup.add_source("s1", server.url("s1"), TimeoutSec="60s")
    d = daemons(setup)
    d.wait_log("s1: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.fault("s1", kind="stall", seconds=30, times=1)
    server.clear_requests()
    assert syncctl(setup, "refresh", "s1").returncode == 0
    wait_for(lambda: server.requests("/s1"), what="the slow request")
    r = syncctl(setup, "logout", "--discard-pending")
    assert r.returncode == 0, r.stderr
    r = syncctl(setup, "refresh", "--wait", timeout=20)
    assert r.returncode == 0, r.stderr
    status = syncctl(setup, "status", "--json")
    assert '"state":"idle"' in status.stdout.replace(" ", ""), status.stdout
    assert setup.cache_doc("s1")["records"] == [{"id": "a"}, {"id": "b"}]
    assert d.stop() == 0


def test_logout_during_refresh_wait_answers_cancelled_not_a_storage_failure(server, setup, daemons):
    d = two_synced_sources(server, setup, daemons)
    server.fault("s1", kind="stall", seconds=30, times=1)
    server.clear_requests()
    client = background(setup, "refresh", "s1", "--wait")
    wait_for(lambda: server.requests("/s1"), what="the slow request")
    r = syncctl(setup, "logout", "--discard-pending")
    assert r.returncode == 0, r.stderr
    out, err = client.communicate(timeout=10)
    assert (client.returncode, err) == (1, "syncctl: the refresh was cancelled by a logout\n"), err
    # The daemon keeps running and the next refresh brings the data back.
    r = syncctl(setup, "refresh", "--wait", timeout=20)
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("s1")["records"] == [{"id": "a"}]
    assert d.stop() == 0


def test_sigterm_ends_watch_with_syncd_stopped_not_an_old_syncd(server, setup, daemons):
    d = two_synced_sources(server, setup, daemons)
    watches = [background(setup, "watch"), background(setup, "--json", "watch")]
    for watch in watches:
        assert watch.stdout.readline(), "watch printed its first line"
    d.signal(signal.SIGTERM)
    d.proc.wait(10)
    assert d.proc.returncode == 0
    for watch in watches:
        out, err = watch.communicate(timeout=10)
        assert (watch.returncode, err) == (3, "syncctl: syncd stopped; the watch ended\n"), err


def test_reload_removing_a_waited_source_answers_refresh_wait(server, setup, daemons):
    d = two_synced_sources(server, setup, daemons)
    server.fault("s2", kind="stall", seconds=30)
    server.clear_requests()
    client = background(setup, "refresh", "--wait")
    wait_for(lambda: server.requests("/s2"), what="the slow request of s2")
    (setup.config / "sources.d" / "s2.source").unlink()
    r = syncctl(setup, "reload")
    assert r.returncode == 0, r.stderr
    out, err = client.communicate(timeout=10)
    assert client.returncode == 1
    assert "removed from the configuration by a reload" in err, err
    assert d.proc.poll() is None
    assert d.stop() == 0


def test_refresh_by_name_after_logout_finds_the_source(server, setup, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    r = syncctl(setup, "logout")
    assert r.returncode == 0, r.stderr
    assert not setup.cache_file("posts").exists()
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 0, r.stderr
    assert "no such source" not in r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS
    r = syncctl(setup, "refresh", "nope")
    assert r.returncode == 1
    assert "nope" in r.stderr
    assert d.stop() == 0


def _lane_threads(pid):
    """The thread IDs of the daemon's refresh lanes (RefreshLane names them refresh-lane-N)."""
    tids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().startswith("refresh-lane-"):
                tids.append(int(task.name))
        except FileNotFoundError:
            pass
    return tids



def freeze_where_the_loop_goes_on(setup, tids, attempts=20):
    """Freezes the threads `tids` at a moment none of them holds a lock the daemon's loop needs: a thread stopped
    inside a progress report (the loop's event stream's lock) would stop the loop too, which no real daemon does.
    The loop answering a status call (which goes through that stream) shows it goes on; else thaw and try again."""
    for _ in range(attempts):
        frozen = [FrozenThread(tid) for tid in tids]
        r = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "--timeout=2", "status"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0:
            return frozen
        for thread in frozen:
            thread.thaw()
        time.sleep(0.05)
    raise AssertionError(f"the loop stopped whenever the threads {tids} were frozen ({attempts} tries)")


class FrozenThread:
    """One thread of another process stopped with ptrace(PTRACE_SEIZE, PTRACE_INTERRUPT): the rest of the
    process runs on (a signal to the process goes to another thread). `thaw()` lets it go on."""
    SEIZE, INTERRUPT, DETACH = 0x4206, 0x4207, 17
    WALL = 0x40000000

    def __init__(self, tid):
        self.tid = tid
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        self._call(self.SEIZE)
        self._call(self.INTERRUPT)
        os.waitpid(tid, self.WALL)  # the interrupt stop
        self.frozen = True

    def _call(self, request):
        if self.libc.ptrace(request, self.tid, None, None) != 0:
            raise OSError(ctypes.get_errno(), f"ptrace({request:#x}, {self.tid})")

    def thaw(self):
        """Detaches (the thread goes on); when its process ended meanwhile, reaps the traced thread."""
        if not self.frozen:
            return
        self.frozen = False
        try:
            self._call(self.DETACH)
        except OSError:
            try:
                os.waitpid(self.tid, self.WALL)
            except ChildProcessError:
                pass


def test_sigterm_waits_for_refresh_lanes_still_unwinding_before_the_process_ends(server, setup, daemons):
    """The process does not end while a refresh lane is still unwinding its cancelled transfer (inside
    libcurl or SQLite): the core waits for the cancelled refreshes within its grace, and only then does the
    stop save the retry states and end. Here the lanes are frozen (ptrace) when SIGTERM arrives and let go
    1.5 s later: the daemon is still running then, the lanes' results are logged before "Stopped", and the
    process exits 0 while the server still holds the requests."""
    d = two_synced_sources(server, setup, daemons)
    server.fault("s1", kind="stall", seconds=30)
    server.fault("s2", kind="stall", seconds=30)
    server.clear_requests()
    assert syncctl(setup, "refresh").returncode == 0
    wait_for(lambda: server.requests("/s1") and server.requests("/s2"), what="both slow requests")
    lanes = _lane_threads(d.proc.pid)
    assert len(lanes) == 2, lanes
    frozen = freeze_where_the_loop_goes_on(setup, lanes)
    try:
        d.signal(signal.SIGTERM)
        d.wait_log("Received SIGTERM")
        time.sleep(1.5)
        # Still running: it waits for its lanes (before, it had already ended here).
        assert d.proc.poll() is None, d.output()
    finally:
        for thread in frozen:
            thread.thaw()
    d.proc.wait(15)                                          # the server still holds both requests (30 s)
    log = d.output()
    assert d.proc.returncode == 0, log
    assert "did not end in time" not in log, log
    # Both lanes' cancelled refreshes ended before the stop did.
    stopped = log.index("Stopped")
    assert -1 < log.find("s1: refresh cancelled") < stopped, log
    assert -1 < log.find("s2: refresh cancelled") < stopped, log


def test_sigterm_while_the_configuration_is_read_is_a_clean_stop_not_death_by_signal(server, setup):
    """SIGTERM before the daemon's loop runs (the configuration being read, the store opened) waits for the loop
    (syncd(8) SIGNALS): the stop is the usual one (status 0, "Stopped"), never the signal's default action
    (death by SIGTERM, no retry state saved). strace slows every openat(2) by 15 ms, and SIGTERM is sent as the
    daemon opens its main configuration file."""
    for name in ("s1", "s2", "s3"):
        server.set_records(name, [{"id": name}])
        setup.add_source(name, server.url(name))
    trace = setup.dir / "openat.trace"
    log = open(setup.dir / "early.log", "w")
    proc = subprocess.Popen(["strace", "-f", "-qq", "-o", str(trace), "-e", "trace=openat",
                             "-e", "inject=openat:delay_exit=15000", str(BIN / "syncd"), "--config-dir", str(setup.config)],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: trace.exists() and "syncd.conf" in trace.read_text(), timeout=30, what="syncd.conf opened")
        pid = int(trace.read_text().split("syncd.conf")[0].splitlines()[-1].split()[0])
        os.kill(pid, signal.SIGTERM)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    output = (setup.dir / "early.log").read_text()
    assert proc.returncode == 0, output
    assert "Received SIGTERM, stopping" in output and "Stopped" in output, output
