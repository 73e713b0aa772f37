"""Control calls take precedence over refreshes (syncd(8), DESCRIPTION; docs/architecture.md, "Status at
scale"): each refresh runs on a thread of its own named refresh-lane-N, ten nice levels below the daemon,
while the control socket's thread, the loop that answers calls and every other thread keep the daemon's
priority or above. Read from /proc/PID/task/TID/{comm,stat} of the real daemon, started at nice 3 so the
lanes are seen to be lowered relative to it (13), not set to a fixed value, and nothing else lowered."""
import json
import os
import subprocess
from pathlib import Path

from conftest import BIN, POSTS, stop_process, wait_for
from test_daemon_concurrency import PAGE_DELAY, SLOW, slow_pages
from test_syncctl import syncctl

DAEMON_NICE = 3
LANE_INCREMENT = 10


def threads(pid):
    """{tid: (comm, nice)} of every thread of `pid` (nice: field 19 of /proc/PID/task/TID/stat)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().rstrip("\n")
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
        found[int(task.name)] = (comm, int(fields[16]))
    return found


def test_refresh_lanes_run_below_the_daemon_and_nothing_else_does(server, setup, tmp_path):
    setup.write_main("[Network]\nReachabilityIntervalSec=0\n")
    server.set_records("slow", SLOW)
    server.options("slow", perPage=1, delay=PAGE_DELAY)
    server.set_records("b", POSTS)
    server.set_records("c", POSTS)
    setup.add_source("slow", server.url("slow"), Pagination="link", TimeoutSec="5s")
    setup.add_source("b", server.url("b"))
    setup.add_source("c", server.url("c"))
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    env.pop("NOTIFY_SOCKET", None)
    base = os.getpriority(os.PRIO_PROCESS, 0)
    log = open(tmp_path / "syncd.log", "w")
    proc = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(setup.config)], stdout=log, stderr=subprocess.STDOUT,
                            env=env, preexec_fn=lambda: os.nice(DAEMON_NICE))
    try:
        wait_for(lambda: (tmp_path / "syncd.log").read_text().count(": synced 2 records") == 2, timeout=20,
                 what="b and c synced")
        wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
        pages = slow_pages(server)
        wait_for(lambda: slow_pages(server) > pages, timeout=5, what="slow still paging")
        daemon = base + DAEMON_NICE

        # While "slow" pages on its lane, a control call is answered and its handling threads are not lowered.
        def states():
            r = syncctl(setup, "status", "--json")
            assert r.returncode == 0, r.stderr
            return {entry["name"]: entry["state"] for entry in json.loads(r.stdout)["sources"]}
        # (The lanes log "synced" just before the loop records it: b and c may say "syncing" a moment longer.)
        wait_for(lambda: states() == {"slow": "syncing", "b": "idle", "c": "idle"}, what="slow syncing, b and c idle")
        seen = threads(proc.pid)

        lanes = {tid: nice for tid, (comm, nice) in seen.items() if comm.startswith("refresh-lane-")}
        others = {tid: (comm, nice) for tid, (comm, nice) in seen.items() if tid not in lanes}
        # Three sources refreshed at start, on three lanes at once, ten levels below the daemon as started.
        assert len(lanes) == 3, seen
        assert set(lanes.values()) == {min(19, daemon + LANE_INCREMENT)}, seen
        # Nothing else is lowered: the main thread as started, the control socket's thread and the timer, and
        # libdispatch's pool threads that run the loop (which set themselves to nice 0 when they may: as root).
        assert others[proc.pid] == ("syncd", daemon), seen
        assert any(comm == "control" for comm, _ in others.values()), seen
        assert any(comm == "timer" for comm, _ in others.values()), seen
        assert max(nice for _, nice in others.values()) <= daemon, seen
        assert "slow: synced" not in (tmp_path / "syncd.log").read_text()
    finally:
        stop_process(proc)
        log.close()
