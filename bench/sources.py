#!/usr/bin/env python3
"""Scale in sources (issue 13, item 7): N sources on one nginx, the real daemon, and `syncctl status`
timed while the refreshes run. Per-event work must not grow with N: a full round costs O(N) and status
answers within 100 ms meanwhile. Usage: bench/sources.py [N ...] (default 2500 10000); BIN picks the
binaries (default .build/release). Writes the figures into docs/benchmarks.md ("Scale in sources")."""
import json, os, shutil, signal, socket, statistics, subprocess, sys, threading, time
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
    """`syncctl status --json` in a loop until `stop` is set; returns the wall times in ms."""
    times = []
    while not stop.is_set():
        start = time.monotonic()
        r = subprocess.run([str(BIN / "syncctl"), "--socket", socket_path, "status", "--json"], capture_output=True, timeout=120)
        if r.returncode == 0:
            times.append((time.monotonic() - start) * 1000)
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
    started = time.monotonic()
    daemon = subprocess.Popen([str(BIN / "syncd"), "--config-dir", str(work / "etc")], stdout=log, stderr=subprocess.STDOUT)
    socket_path = str(work / "run" / "io.syncd.Manager")
    while not os.path.exists(socket_path):
        time.sleep(0.05)
    stop = threading.Event()
    during = []
    watcher = threading.Thread(target=lambda: during.extend(status_latencies(socket_path, stop)))
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
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(10)
    log.close()
    assert r.returncode == 0, r.stderr
    return {"n": n, "first": first_round, "second": second_round, "status": during}


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [2500, 10000]
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
    for r in results:
        s = sorted(r["status"])
        p95 = s[min(len(s) - 1, int(len(s) * 0.95))] if s else float("nan")
        rows.append(f"| {r['n']:,} | {r['first']:.1f} s ({r['first'] / r['n'] * 1000:.2f} ms/source) | "
                    f"{r['second']:.1f} s ({r['second'] / r['n'] * 1000:.2f} ms/source) | {len(s)} | "
                    f"{statistics.median(s):.0f} ms | {p95:.0f} ms | {max(s):.0f} ms |")
    build = "release" if BIN.name == "release" else BIN.name
    section = f"""## Scale in sources (issue 13)

Command: `bench/sources.py {' '.join(map(str, sizes))}` ({build} build; one nginx on loopback serving a
20-record listing to every source; WatchLinks=no). Round 1 is the startup refresh of every source
(first sync: listing stored, cache file written), round 2 `syncctl refresh --wait` of every source
(304 Not Modified). `syncctl status --json` runs every 0.2 s during both rounds; its times include
starting syncctl. Measured {time.strftime('%Y-%m-%d', time.gmtime())}:

| sources | round 1 (first sync) | round 2 (304) | status calls | status median | status p95 | status max |
|---|---|---|---|---|---|---|
""" + "\n".join(rows) + """

Per-event work no longer grows with the number of sources: the scheduler keeps a deadline heap (a timer
firing touches only the sources that are due), the run queue and the failing-source checks are sets,
and STATUS= (a summary of every source) is rebuilt at most once a second with more than 100 sources
instead of after every event.
Before, each event rebuilt a snapshot of every source: with 10,000 sources a round took 165 s and
`syncctl status` 6–36 s. `GetStatus` itself stays one pass over every source (about 90 ms of the
daemon's CPU and 2.5 MB of JSON at 10,000 sources), and the status calls of this benchmark take that
share of the loop while the round runs, which is most of why the cost per source still rises from
2,500 to 10,000 sources. The 100 ms target for `syncctl status` is met at 2,500 sources, not yet at
10,000 (median about 220 ms): the next step is a status that does not serialise every source.
"""
    doc_path = ROOT / "docs" / "benchmarks.md"
    doc = doc_path.read_text()
    start = doc.find("## Scale in sources (issue 13)")
    if start >= 0:
        end = doc.find("\n## ", start + 5)
        doc = doc[:start] + section + ("\n" + doc[end + 1:] if end >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + section
    doc_path.write_text(doc)
    print(section)


if __name__ == "__main__":
    main()
