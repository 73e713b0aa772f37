#!/usr/bin/env python3
"""Scale in sources (issue 13, item 7): N sources on one nginx, the real daemon, and `syncctl status`
timed while the refreshes run. Per-event work must not grow with N: a full round costs O(N) and status
answers within 100 ms meanwhile. Usage: bench/sources.py [N ...] (default 1000 2500 5000 10000); BIN picks the
binaries (default .build/release). Writes the figures into docs/benchmarks.md ("Scale in sources")."""
import json, os, resource, shutil, signal, socket, statistics, subprocess, sys, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("BIN", ROOT / ".build" / "release"))
WORK = ROOT / "bench" / "out" / "sources"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(port):
    ngx = WORK / "nginx"
    ngx.mkdir(parents=True)
    (ngx / "data").mkdir()
    (ngx / "data" / "s.json").write_text(json.dumps([{"id": i, "title": f"record {i}"} for i in range(20)]))
    user = "user root root;" if os.getuid() == 0 else ""
    (ngx / "nginx.conf").write_text(f"""{user}
daemon off; worker_processes 1; pid {ngx}/nginx.pid; error_log {ngx}/error.log;
events {{ worker_connections 256; }}
http {{ access_log off; types {{ application/json json; }} etag on;
  client_body_temp_path {ngx}; proxy_temp_path {ngx}; fastcgi_temp_path {ngx}; uwsgi_temp_path {ngx}; scgi_temp_path {ngx};
  server {{ listen 127.0.0.1:{port}; root {ngx}/data; }} }}
""")
    return subprocess.Popen(["nginx", "-c", str(ngx / "nginx.conf"), "-p", str(ngx)])


def status_latencies(socket_path, stop):
    """`syncctl status --json` and `syncctl status` (the table) in turn until `stop` is set, 0.2 s apart; returns
    the wall times in ms of each form."""
    times = {"json": [], "table": []}
    while not stop.is_set():
        for form, args in FORMS.items():
            start = time.monotonic()
            r = subprocess.run([str(BIN / "syncctl"), "--socket", socket_path] + args, capture_output=True, timeout=120)
            if r.returncode == 0:
                times[form].append((time.monotonic() - start) * 1000)
            time.sleep(0.2)
    return times


def run(n, port):
    work = WORK / f"n{n}"
    (work / "etc" / "sources.d").mkdir(parents=True)
    (work / "etc" / "syncd.conf").write_text(
        f"[Daemon]\nStateDirectory={work}/state\nCacheDirectory={work}/cache\nRuntimeDirectory={work}/run\n"
        "[Network]\nWatchLinks=no\n")
    for i in range(n):
        (work / "etc" / "sources.d" / f"s{i:05d}.source").write_text(f"[Source]\nURL=http://127.0.0.1:{port}/s.json?n={i}\n")
    log = open(work / "syncd.log", "w")
    load_at_start = os.getloadavg()[0]
    started = time.monotonic()
    daemon = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(work / "etc")], stdout=log, stderr=subprocess.STDOUT)
    socket_path = str(work / "run" / "io.syncd.Manager")
    while not os.path.exists(socket_path):
        time.sleep(0.05)
    stop = threading.Event()
    during = {}
    watcher = threading.Thread(target=lambda: during.update(status_latencies(socket_path, stop)))
    watcher.start()
    # Round 1: the startup refresh of every source (first sync).
    while (work / "syncd.log").read_text().count(": synced ") < n:
        time.sleep(0.2)
    first_round = time.monotonic() - started
    # Round 2: every source again on request (304 Not Modified from nginx), timed by `refresh --wait`.
    start = time.monotonic()
    r = subprocess.run([str(BIN / "syncctl"), "--socket", socket_path, "refresh", "--wait"], capture_output=True, text=True, timeout=3600)
    second_round = time.monotonic() - start
    stop.set()
    watcher.join()
    # Round 3: the same as round 2 with no status calls meanwhile: the round's own cost per source.
    start = time.monotonic()
    r3 = subprocess.run([str(BIN / "syncctl"), "--socket", socket_path, "refresh", "--wait"], capture_output=True, text=True, timeout=3600)
    third_round = time.monotonic() - start
    assert r3.returncode == 0, r3.stderr
    # The same call with nothing else running: the cost of a status call itself.
    idle = []
    for _ in range(10):
        start = time.monotonic()
        subprocess.run([str(BIN / "syncctl"), "--socket", socket_path, "status", "--json"], capture_output=True, check=True, timeout=120)
        idle.append((time.monotonic() - start) * 1000)
    # CPU per call, which load disturbs far less than wall time: the daemon's from /proc/PID/stat, syncctl's
    # from getrusage of the children, over CPU_CALLS idle calls of each form.
    cpu = {form: cpu_per_call(daemon.pid, socket_path, args) for form, args in FORMS.items()}
    human = []
    for _ in range(10):
        start = time.monotonic()
        subprocess.run([str(BIN / "syncctl"), "--socket", socket_path, "status"], capture_output=True, check=True, timeout=120)
        human.append((time.monotonic() - start) * 1000)
    lanes = lane_priorities(daemon.pid)
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(10)
    log.close()
    assert r.returncode == 0, r.stderr
    return {"n": n, "first": first_round, "second": second_round, "third": third_round, "status": during["json"],
            "table": during["table"], "idle": idle,
            "human": human, "cpu": cpu, "load": (load_at_start, os.getloadavg()[0]), "lanes": lanes}


def lane_priorities(pid):
    """The nice values of the daemon's refresh lanes (threads named refresh-lane-N) and of its other threads."""
    lanes, others = set(), set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            nice = int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])
        except OSError:
            continue
        (lanes if comm.startswith("refresh-lane-") else others).add(nice)
    return sorted(lanes), sorted(others)


CPU_CALLS = 50
# The line in docs/benchmarks.md after which the section is kept as it is when the figures are written again.
KEPT = "<!-- bench/sources.py writes the section up to here -->"
FORMS = {"json": ["status", "--json"], "table": ["status"]}
TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """utime + stime of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cpu_per_call(pid, socket_path, args):
    """(daemon ms, syncctl ms) of CPU per call of `syncctl ARGS`, averaged over CPU_CALLS calls."""
    before_daemon = process_cpu(pid)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(CPU_CALLS):
        subprocess.run([str(BIN / "syncctl"), "--socket", socket_path] + args, capture_output=True, check=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    daemon = (process_cpu(pid) - before_daemon) / CPU_CALLS * 1000
    client = ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) / CPU_CALLS * 1000
    return daemon, client


def percentile95(ordered):
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] if ordered else float("nan")


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 2500, 5000, 10000]
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    port = free_port()
    nginx = start_nginx(port)
    try:
        time.sleep(0.5)
        results = [run(n, port) for n in sizes]
    finally:
        nginx.terminate()
        nginx.wait()
    rows = []
    table_rows = []
    cpu_rows = []
    for r in results:
        s = sorted(r["status"])
        p95 = s[min(len(s) - 1, int(len(s) * 0.95))] if s else float("nan")
        rows.append(f"| {r['n']:,} | {r['first']:.1f} s ({r['first'] / r['n'] * 1000:.2f} ms/source) | "
                    f"{r['second']:.1f} s ({r['second'] / r['n'] * 1000:.2f} ms/source) | "
                    f"{r['third']:.1f} s ({r['third'] / r['n'] * 1000:.2f} ms/source) | {len(s)} | "
                    f"{statistics.median(s):.0f} ms | {p95:.0f} ms | {max(s):.0f} ms | {statistics.median(r['idle']):.0f} ms |")
        t = sorted(r["table"])
        table_rows.append(f"| {r['n']:,} | {len(t)} | {statistics.median(t):.0f} ms | {percentile95(t):.0f} ms | {max(t):.0f} ms | "
                          f"{statistics.median(r['human']):.0f} ms |")
        cpu_rows.append(f"| {r['n']:,} | {r['cpu']['json'][0]:.1f} ms | {r['cpu']['json'][1]:.1f} ms | "
                        f"{statistics.median(r['idle']):.0f} ms | {r['cpu']['table'][0]:.1f} ms | {r['cpu']['table'][1]:.1f} ms | "
                        f"{statistics.median(r['human']):.0f} ms |")
    largest = max(results, key=lambda r: r["n"])
    ordered = sorted(largest["status"])
    median, p95 = statistics.median(ordered), percentile95(ordered)
    table = sorted(largest["table"])
    table_median, table_p95 = statistics.median(table), percentile95(table)
    met = median < 100 and p95 < 100 and table_median < 100 and table_p95 < 100
    verdict = (f"**{'met' if met else 'not met'}** at {largest['n']:,} sources: `syncctl status --json` median "
               f"{median:.0f} ms, p95 {p95:.0f} ms, and `syncctl status` (the table) median {table_median:.0f} ms, p95 "
               f"{table_p95:.0f} ms, while the refreshes run (target: all under 100 ms)")
    build = "release" if BIN.name == "release" else f"{BIN} (release)"
    load_start, load = largest["load"]
    lanes, others = largest["lanes"]
    section = f"""## Scale in sources (issue 13)

Command: `bench/sources.py {' '.join(map(str, sizes))}` ({build} build; one nginx on loopback serving a
20-record listing to every source; WatchLinks=no). Round 1 is the startup refresh of every source
(first sync: listing stored, cache file written), round 2 `syncctl refresh --wait` of every source
(304 Not Modified), round 3 the same again with no status calls. `syncctl status --json` and `syncctl status`
(the table) run in turn, 0.2 s apart, during rounds 1 and 2; their times include starting syncctl and reading
its 280 bytes per source; "idle" is the same call after the rounds (median of 10). CPU per call is measured after the rounds over {CPU_CALLS} calls of
each form (the daemon's from `/proc/PID/stat`, syncctl's from `getrusage` of the children): unlike wall
time, other work on the machine hardly changes it. Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on the
project's 2-core machine, load average {load_start:.1f} at the start of the {largest['n']:,}-source run and {load:.1f} at its
end (the benchmark's own nginx, daemon and syncctl, plus whatever else ran on the shared machine). The
daemon's refresh lanes ran at nice {', '.join(map(str, lanes)) or '(none seen)'}, its other threads at nice {', '.join(map(str, others))}.

Verdict: {verdict}.

This run (refresh lanes on threads of their own at nice +10; a source's status object made again only
when something marks the source changed; `syncctl status --json` checks the reply's frame and prints it as
received; `syncctl status` writes its table in one pass over the reply's bytes, received into one buffer):

| sources | round 1 (first sync) | round 2 (304) | round 3 (304, no status calls) | status calls | status median | status p95 | status max | status idle |
|---|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + """

`syncctl status` (the table) during rounds 1 and 2, and idle:

| sources | table calls | table median | table p95 | table max | table idle |
|---|---|---|---|---|---|
""" + "\n".join(table_rows) + """

CPU per call, idle daemon:

| sources | `status --json`: daemon CPU | syncctl CPU | wall (idle median) | `status` (table): daemon CPU | syncctl CPU | wall (idle median) |
|---|---|---|---|---|---|---|
""" + "\n".join(cpu_rows) + """

"""
    doc_path = ROOT / "docs" / "benchmarks.md"
    doc = doc_path.read_text()
    start = doc.find("## Scale in sources (issue 13)")
    if start >= 0:
        # What follows KEPT in the section (runs, earlier figures: written by hand) stays.
        end = doc.find("\n## ", start + 5)
        kept = doc.find(KEPT, start)
        if kept >= 0 and (end < 0 or kept < end):
            doc = doc[:start] + section + doc[kept:]
        else:
            doc = doc[:start] + section + ("\n" + doc[end + 1:] if end >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + section
    doc_path.write_text(doc)
    print(section)


if __name__ == "__main__":
    main()
