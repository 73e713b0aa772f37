#!/usr/bin/env python3
"""Incremental pull against a full re-sync (issue 26; syncd.conf(5), "Incremental pull"), side by side in one run.

nginx on loopback serves one listing twice: as `posts.json` to a source with `Delta=watermark` (a request with
`?since=` gets `delta.json`, the 10 records changed since the checkpoint, stamped later than every other record),
and as `full.json` to a source without `Delta=` (each run it switches between two versions that differ in the same
10 records, so every refresh downloads the whole listing). One running daemon holds both; the runs alternate
between them. For each refresh: the wall time of `syncctl refresh SOURCE --wait`, the bytes nginx sent
(`$bytes_sent` of its access log, headers included), the bytes the daemon caused to be written to storage
(`write_bytes` of /proc/PID/io) and its peak RSS during the refresh (VmHWM, reset through /proc/PID/clear_refs).
With `--reflink`, the same again with the state and cache folders on an XFS file system on a loop device
(`reflink=1`: copy_file_range(2) may share extents there).

Usage: bench/delta.py [--records 100000 1000000] [--runs 5] [--reflink] [--bin .build/release]
Writes the section "Incremental pull" of docs/benchmarks.md and prints it.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from docsection import put_section  # noqa: E402
from listings import free_port, listing  # noqa: E402
CHANGED = 10


def changed_ids(records):
    return [1 + (records * k) // (CHANGED + 1) for k in range(1, CHANGED + 1)]


def variant(source, target, records, mark):
    """The listing with the titles of the changed records marked: a full listing that differs in those records."""
    data = source.read_bytes()
    for rid in changed_ids(records):
        old = b'{"id":%d,"title":"Post %d"' % (rid, rid)
        assert data.count(old) == 1, rid
        data = data.replace(old, b'{"id":%d,"title":"Post %d (%s)"' % (rid, rid, mark.encode()))
    target.write_bytes(data)


def delta_file(path, records, run):
    """The changes since the previous run: the same records, edited again, stamped after everything before."""
    stamp = f"2026-12-{2 + run // 24:02d}T{run % 24:02d}:00:00Z"
    body = [{"id": rid, "title": f"Post {rid} (run {run})", "author": "Ada Lovelace", "body": "changed",
             "tags": ["news"], "lastModified": stamp} for rid in changed_ids(records)]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, separators=(",", ":")))
    os.replace(tmp, path)
    return sum(len(json.dumps(r, separators=(",", ":"))) for r in body)


class Nginx:
    def __init__(self, work, www):
        self.port = free_port()
        self.dir = work / "nginx"
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.log = self.dir / "access.log"
        user = "user root root;" if os.getuid() == 0 else ""
        (self.dir / "nginx.conf").write_text(f"""{user}
daemon off; worker_processes 1; pid {self.dir}/nginx.pid; error_log {self.dir}/error.log;
events {{ worker_connections 64; }}
http {{ types {{ application/json json; }} sendfile on; log_format b '$request_uri $status $bytes_sent';
  access_log {self.log} b;
  client_body_temp_path {self.dir}; proxy_temp_path {self.dir}; fastcgi_temp_path {self.dir}; uwsgi_temp_path {self.dir}; scgi_temp_path {self.dir};
  server {{ listen 127.0.0.1:{self.port}; root {www}; etag on;
    location = /posts.json {{ if ($arg_since) {{ rewrite ^ /delta.json break; }} }} }} }}
""")
        self.proc = subprocess.Popen(["nginx", "-c", str(self.dir / "nginx.conf"), "-p", str(self.dir)])
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("nginx did not start")

    def sent_since(self, offset):
        """Bytes sent for the requests logged after `offset`, and the requests."""
        with open(self.log, "rb") as f:
            f.seek(offset)
            lines = f.read().decode().splitlines()
        return sum(int(line.split()[-1]) for line in lines), [line.split()[0] for line in lines]

    def offset(self):
        return self.log.stat().st_size if self.log.exists() else 0

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def result_size(records):
    return listing(records).stat().st_size


def proc_io(pid, key):
    for line in open(f"/proc/{pid}/io"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def hwm_kib(pid):
    return int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))


def measure(records, runs, binary, work, label):
    base = listing(records)
    www = work / "www"
    shutil.rmtree(www, ignore_errors=True)
    www.mkdir(parents=True)
    os.link(base, www / "posts.json") if base.stat().st_dev == www.stat().st_dev else shutil.copy(base, www / "posts.json")
    variant(base, www / "full.json", records, "run 0")
    delta_file(www / "delta.json", records, 0)
    nginx = Nginx(work, www)
    conf = work / "etc"
    shutil.rmtree(conf, ignore_errors=True)
    (conf / "sources.d").mkdir(parents=True)
    state = work / "fs" / "state"
    cache = work / "fs" / "cache"
    for d in (state, cache):
        shutil.rmtree(d, ignore_errors=True)
    (conf / "syncd.conf").write_text(f"[Daemon]\nStateDirectory={state}\nCacheDirectory={cache}\nRuntimeDirectory={work}/run\n"
                                     "[Refresh]\nIntervalSec=1d\n")
    (conf / "sources.d" / "delta.source").write_text(
        f"[Source]\nURL=http://127.0.0.1:{nginx.port}/posts.json\nDelta=watermark\nDeltaField=/lastModified\n"
        "DeltaQuery=since={checkpoint}\nMaxBytes=1G\nListingTimeoutSec=30min\nTimeoutSec=10min\n")
    (conf / "sources.d" / "full.source").write_text(
        f"[Source]\nURL=http://127.0.0.1:{nginx.port}/full.json\nMaxBytes=1G\nListingTimeoutSec=30min\nTimeoutSec=10min\n")
    log = open(work / "syncd.log", "w")
    daemon = subprocess.Popen([str(binary / "syncd"), "--config-dir", str(conf)], stderr=log, stdout=log)
    socket_path = work / "run" / "io.syncd.Manager"
    deadline = time.time() + 600
    while time.time() < deadline:
        text = (work / "syncd.log").read_text()
        if text.count("synced") >= 2 and socket_path.exists():
            break
        time.sleep(0.2)
    else:
        raise SystemExit("the first syncs did not finish:\n" + (work / "syncd.log").read_text()[-2000:])
    rows = {"delta": [], "full": []}
    changed_bytes = 0
    try:
        for run in range(1, runs + 1):
            for kind in ("delta", "full"):
                if kind == "delta":
                    changed_bytes = delta_file(www / "delta.json", records, run)
                else:
                    # New content every run, and a new mtime (nginx's ETag is mtime and size): never a 304.
                    variant(base, www / "full.tmp", records, f"run {run}")
                    os.utime(www / "full.tmp", (time.time() + run, time.time() + run))
                    os.replace(www / "full.tmp", www / "full.json")
                subprocess.run(["sync"], check=True)
                with open(f"/proc/{daemon.pid}/clear_refs", "w") as f:
                    f.write("5")
                offset, w0 = nginx.offset(), proc_io(daemon.pid, "write_bytes")
                t0 = time.monotonic()
                r = subprocess.run([str(binary / "syncctl"), "--socket", str(socket_path), "refresh", kind, "--wait"],
                                   capture_output=True, text=True)
                wall = time.monotonic() - t0
                if r.returncode != 0:
                    raise SystemExit(f"refresh {kind} failed: {r.stderr}")
                subprocess.run(["sync"], check=True)
                written = proc_io(daemon.pid, "write_bytes") - w0
                time.sleep(0.2)   # nginx writes its log line after the response
                sent, requests = nginx.sent_since(offset)
                if kind == "delta":
                    assert len(requests) == 1 and "since=" in requests[0], requests
                else:
                    assert len(requests) == 1 and sent > result_size(records), (requests, sent)
                rows[kind].append({"wall": wall, "sent": sent, "written": written, "hwm": hwm_kib(daemon.pid), "requests": len(requests)})
        cache_bytes = (cache / "default" / "full.json").stat().st_size
        cached = json.loads((cache / "default" / "delta.json").read_bytes())
        assert len(cached["records"]) == records, len(cached["records"])
        assert sum(1 for r in cached["records"] if r["title"] == f"Post {changed_ids(records)[0]} (run {runs})") == 1
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait()
        nginx.stop()
    floor = [replacement_floor(cache / "default" / "delta.json") for _ in range(runs)]
    return {"label": label, "records": records, "size": base.stat().st_size, "changed": changed_bytes, "rows": rows,
            "cache_bytes": cache_bytes, "floor": floor}


def replacement_floor(path):
    """The wall time of replacing `path` atomically with a copy of itself and nothing else: copy_file_range(2) of the
    whole file into a new file beside it, fsync, rename, fsync of the folder. What any atomic replacement of the
    whole cache file costs on that file system, whatever it changes (the daemon stopped, the page cache flushed)."""
    subprocess.run(["sync"], check=True)
    tmp, target = path.with_name(".floor.tmp"), path.with_name("floor.json")
    t0 = time.monotonic()
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        left = os.fstat(src.fileno()).st_size
        while left > 0:
            n = os.copy_file_range(src.fileno(), dst.fileno(), left)
            if n == 0:
                break
            left -= n
        os.fsync(dst.fileno())
    os.replace(tmp, target)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    wall = time.monotonic() - t0
    target.unlink()
    return wall


def reflink_mount(work):
    """An XFS file system with reflink on a loop device, mounted at work/fs; None when that cannot be made here."""
    if not shutil.which("mkfs.xfs"):
        subprocess.run(["apt-get", "install", "-y", "-q", "xfsprogs"], capture_output=True)
    if not shutil.which("mkfs.xfs"):
        return None
    image = work / "xfs.img"
    mount = work / "fs"
    mount.mkdir(parents=True, exist_ok=True)
    subprocess.run(["truncate", "-s", "3G", str(image)], check=True)
    if subprocess.run(["mkfs.xfs", "-q", "-f", "-m", "reflink=1", str(image)], capture_output=True).returncode != 0:
        return None
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if loop.returncode != 0:
        return None
    device = loop.stdout.strip()
    if subprocess.run(["mount", device, str(mount)], capture_output=True).returncode != 0:
        subprocess.run(["losetup", "-d", device])
        return None
    return device


def unmount(work, device):
    subprocess.run(["umount", str(work / "fs")])
    subprocess.run(["losetup", "-d", device])
    (work / "xfs.img").unlink(missing_ok=True)


def main():
    global CHANGED
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reflink", action="store_true")
    parser.add_argument("--bin", default=str(ROOT / ".build" / "release"))
    parser.add_argument("--changed", type=int, default=CHANGED, help="records changed before each refresh (default 10)")
    parser.add_argument("--fleet", type=int, default=0, help="also report the server's bytes per refresh round for this many daemons")
    args = parser.parse_args()
    CHANGED = args.changed
    binary = Path(args.bin).resolve()
    results = []
    for records in args.records:
        work = ROOT / "bench" / "out" / f"delta-{records}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        results.append(measure(records, args.runs, binary, work, "ext4 (the project's file system)"))
        if args.reflink:
            work = ROOT / "bench" / "out" / f"delta-{records}-xfs"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            device = reflink_mount(work)
            if device is None:
                results.append({"label": "XFS with reflink: could not be set up here", "records": records})
            else:
                try:
                    results.append(measure(records, args.runs, binary, work, "XFS, reflink=1, on a loop device"))
                finally:
                    unmount(work, device)
    print(report(results, args))


def report(results, args):
    med = statistics.median
    lines = [
        f"## Incremental pull: a delta against a full re-sync, {CHANGED:,} records changed (issue 26)",
        "",
        f"`bench/delta.py --records {' '.join(map(str, args.records))} --runs {args.runs} --changed {CHANGED}"
        f"{' --reflink' if args.reflink else ''}{f' --fleet {args.fleet}' if args.fleet else ''}` "
        f"({datetime.date.today().isoformat()}, the project's 2-core machine, release build): one daemon, two sources over "
        f"the same listing on loopback nginx, {CHANGED} records changed before each refresh; `Delta=watermark` "
        "(`DeltaField=/lastModified`, `DeltaQuery=since={checkpoint}`) against no `Delta=`, alternating, medians of "
        f"{args.runs} runs each. Bytes sent are nginx's `$bytes_sent` (headers included); written is the daemon's "
        "`write_bytes` (/proc/PID/io) after `sync`; peak RSS is the daemon's VmHWM during the refresh.",
        "",
        "| records (listing) | file system | refresh | wall | bytes received | written to storage | peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    verdicts, floors = [], []
    for result in results:
        if "rows" not in result:
            lines.append(f"| {result['records']:,} | {result['label']} | | | | | |")
            continue
        size = f"{result['records']:,} ({result['size'] / 1e6:.1f} MB)"
        for kind in ("delta", "full"):
            rows = result["rows"][kind]
            lines.append(f"| {size} | {result['label']} | {'delta' if kind == 'delta' else 'full re-sync'} | "
                         f"{med(r['wall'] for r in rows) * 1000:.0f} ms | {med(r['sent'] for r in rows):,.0f} B | "
                         f"{med(r['written'] for r in rows) / 2**20:.2f} MiB | {med(r['hwm'] for r in rows) / 1024:.1f} MiB |")
        d, f = result["rows"]["delta"], result["rows"]["full"]
        ratio = med(r["wall"] for r in d) / med(r["wall"] for r in f)
        floors.append(f"| {size} | {result['label']} | {med(result['floor']) * 1000:.0f} ms | "
                      f"{med(result['floor']) / med(r['wall'] for r in f):.3f}× | {ratio:.3f}× |")
        goal = 0.2 if result["records"] < 1_000_000 else 0.1
        budget = 2 * result["changed"] + 4096
        verdicts.append(f"| {result['records']:,}, {result['label']} | bytes ≤ 2 × {result['changed']:,} + 4 KiB = {budget:,} | "
                        f"{med(r['sent'] for r in d):,.0f} | {'met' if med(r['sent'] for r in d) <= budget else 'not met'} |")
        verdicts.append(f"| {result['records']:,}, {result['label']} | wall ≤ {goal}× the full re-sync | {ratio:.3f}× | "
                        f"{'met' if ratio <= goal else 'not met'} |")
        if "reflink" in result["label"]:
            written = med(r["written"] for r in d)
            limit = 2**20 + result["changed"]
            verdicts.append(f"| {result['records']:,}, {result['label']} | written ≤ 1 MiB + the changes | {written / 2**20:.2f} MiB | "
                            f"{'met' if written <= limit else 'not met'} |")
    lines += ["", "The cache file a full listing writes (`full.json`, the daemon's copy of the listing, block-padded as "
              "docs/syncd.cache.5.md says):", "", "| records (listing) | file system | cache file | ÷ listing |", "|---|---|---|---|"]
    lines += [f"| {r['records']:,} ({r['size']:,} B) | {r['label']} | {r['cache_bytes']:,} B | {r['cache_bytes'] / r['size']:.4f} |"
              for r in results if "rows" in r]
    lines += ["", "| case | goal | measured | verdict |", "|---|---|---|---|"] + verdicts + [""]
    lines += ["The floor of any delta that keeps the cache file one document replaced atomically: the cache file copied "
              "whole into a new file with copy_file_range(2), flushed, renamed into place, the folder flushed, with nothing "
              "else done (`replacement_floor`, after the daemon stopped; medians of the same number of runs):", "",
              "| records (listing) | file system | floor | floor ÷ full re-sync | delta ÷ full re-sync |", "|---|---|---|---|---|"]
    lines += floors + [""]
    if args.fleet:
        lines += [f"Fleet: {args.fleet:,} daemons each refreshing once per round, {CHANGED:,} records changed per round, the server's "
                  "bytes per round (each daemon's bytes as measured above, times the fleet):", "",
                  "| records | full re-sync | delta | delta ÷ full |", "|---|---|---|---|"]
        for result in results:
            if "rows" not in result or "reflink" in result["label"]:
                continue
            full = med(r["sent"] for r in result["rows"]["full"]) * args.fleet
            delta = med(r["sent"] for r in result["rows"]["delta"]) * args.fleet
            lines.append(f"| {result['records']:,} | {full / 1e9:,.1f} GB | {delta / 1e9:,.3f} GB | 1/{full / delta:,.0f} |")
        lines.append("")
    section = "\n".join(lines) + "\n"
    put_section(section)
    return section


if __name__ == "__main__":
    main()
