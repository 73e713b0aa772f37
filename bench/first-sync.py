#!/usr/bin/env python3
"""The first sync against the transfer floor, and the record scanner's throughput (issue 29; section "First
sync against the transfer floor" of docs/benchmarks.md).

Usage (bench/run.sh runs it with nginx up): bench/first-sync.py BASE_URL BIN_DIR [--runs N] [--runs-1m N]
  BASE_URL  where nginx serves bench/data (100k.json, 1m.json)
  BIN_DIR   the release build (syncd)

Each round removes syncd's state and cache, runs `syncd --once` (a first sync), then `curl -s -o FILE`, then
`curl -s -o FILE` followed by `sync FILE` (the floor with a flush, as syncd makes the file durable):
interleaved, so that a busy minute on a shared machine slows all three alike. For each it reads the wall time,
the CPU time (user + system) and the peak RSS from wait4. One round of each listing runs first, unrecorded.
Then `bench/scanner-throughput.swift` is built with swiftc and run on its listing shapes (CPU medians).
Writes the section into docs/benchmarks.md and prints it."""
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "out" / "first-sync"
SHAPES = [("compact", "compact", 2000), ("pretty", "pretty-printed", 1500), ("non-ASCII", "non-ASCII bodies", 1000)]


def measure(command):
    """Runs `command`; returns (wall ms, CPU ms, peak RSS MiB)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if status != 0:
        sys.exit(f"{' '.join(map(str, command))} failed (wait status {status})")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def configure(url):
    """A configuration directory for one source at `url`."""
    shutil.rmtree(WORK / "syncd", ignore_errors=True)
    etc = WORK / "syncd" / "etc"
    (etc / "sources.d").mkdir(parents=True)
    (etc / "syncd.conf").write_text(
        f"[Daemon]\nStateDirectory={WORK}/syncd/state\nCacheDirectory={WORK}/syncd/cache\nRuntimeDirectory={WORK}/syncd/run\n")
    (etc / "sources.d" / "posts.source").write_text(f"[Source]\nURL={url}\n")
    return etc


def rounds(url, syncd, runs):
    """Interleaved rounds against `url`: per program, lists of (wall, cpu, rss)."""
    etc = configure(url)
    out = WORK / "curl.out"
    programs = {
        "syncd": [syncd, "--once", "--config-dir", str(etc)],
        "curl": ["curl", "-s", "-o", str(out), url],
        "curl+sync": ["sh", "-c", 'curl -s -o "$1" "$2" && sync "$1"', "sh", str(out), url],
    }
    results = {name: [] for name in programs}
    for index in range(runs + 1):
        for name, command in programs.items():
            if name == "syncd":
                shutil.rmtree(WORK / "syncd" / "state", ignore_errors=True)
                shutil.rmtree(WORK / "syncd" / "cache", ignore_errors=True)
            figures = measure(command)
            if index > 0:
                results[name].append(figures)
    out.unlink(missing_ok=True)
    return results


def median(values):
    return statistics.median(values)


def scanner():
    """The scanner's CPU throughput in MB/s per shape key, from bench/scanner-throughput.swift."""
    binary = WORK / "scanner-throughput"
    sources = sorted(str(p) for p in (ROOT / "Sources" / "SyncCore" / "JSON").glob("*.swift"))
    subprocess.run([os.environ.get("SWIFTC", "swiftc"), "-O", "-wmo", "-parse-as-library", *sources,
                    str(ROOT / "Sources" / "SyncCore" / "Text" / "JSONText.swift"),
                    str(ROOT / "bench" / "scanner-throughput.swift"), "-lm", "-o", str(binary)], check=True)
    rates = {}
    for key, _, _ in SHAPES:
        line = subprocess.run([str(binary), key, "15"], check=True, capture_output=True, text=True).stdout
        rates[key] = int(line.split("CPU median ")[1].split(" ")[0])
    return rates


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    base, bin_dir = args[0].rstrip("/"), args[1]
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 10
    runs_1m = int(args[args.index("--runs-1m") + 1]) if "--runs-1m" in args else 3
    WORK.mkdir(parents=True, exist_ok=True)
    syncd = os.path.join(bin_dir, "syncd")
    small = rounds(base + "/100k.json", syncd, runs)
    big = rounds(base + "/1m.json", syncd, runs_1m)
    rates = scanner()

    def figures(results, name):
        walls, cpus, rss = zip(*results[name])
        return median(walls), median(cpus), max(rss)

    ok = lambda met: "met" if met else "**not met**"
    s_wall, s_cpu, _ = figures(small, "syncd")
    c_wall, c_cpu, _ = figures(small, "curl")
    f_wall, _, _ = figures(small, "curl+sync")
    b_wall, b_cpu, b_rss = figures(big, "syncd")
    bc_wall, bc_cpu, _ = figures(big, "curl")
    bf_wall, _, _ = figures(big, "curl+sync")
    size = lambda name: os.path.getsize(ROOT / "bench" / "data" / name) / 1e6
    rows = [
        ("100k first sync / `curl -o` (wall, medians)", f"{s_wall / c_wall:.2f}× ({s_wall:.0f} / {c_wall:.0f} ms)", "≤ 1.5×", ok(s_wall <= 1.5 * c_wall)),
        ("its CPU (user + system) / curl's", f"{s_cpu / c_cpu:.2f}× ({s_cpu:.0f} / {c_cpu:.0f} ms)", "≤ 3×", ok(s_cpu <= 3 * c_cpu)),
        ("1M first sync / `curl -o` (wall, medians)", f"{b_wall / bc_wall:.2f}× ({b_wall:.0f} / {bc_wall:.0f} ms)", "≤ 1.5×", ok(b_wall <= 1.5 * bc_wall)),
        ("1M first sync, peak RSS (largest of its runs)", f"{b_rss:.1f} MiB", "≤ 32 MiB", ok(b_rss <= 32)),
    ]
    rows += [(f"scanner, {name} (CPU median)", f"{rates[key]:,} MB/s", f"≥ {goal / 1000:g} GB/s", ok(rates[key] >= goal))
             for key, name, goal in SHAPES]
    table = "\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows)
    section = f"""## First sync against the transfer floor (issue 29)

Command: `make bench` (`bench/first-sync.py`, run by `bench/run.sh`): the release build, nginx on loopback
serving `bench/make-listing.py` listings. Each round removes syncd's state and cache and runs `syncd --once`,
`curl -s -o FILE` and `curl -s -o FILE && sync FILE` one after the other ({runs} rounds for 100k, {runs_1m} for
1M, after one unrecorded round); wall time, CPU time and peak RSS from `wait4`. The scanner figures are
`bench/scanner-throughput.swift` (100k records in 64 KiB chunks, 15 scans, median of the thread's CPU time).
Measured {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} on the project's 2-core machine.

| measure | measured | goal | verdict |
|---|---|---|---|
{table}

| medians, ms | 100k ({size('100k.json'):.1f} MB): wall | CPU | 1M ({size('1m.json'):.0f} MB): wall | CPU |
|---|---|---|---|---|
| `syncd --once`, first sync | {s_wall:.1f} | {s_cpu:.1f} | {b_wall:.0f} | {b_cpu:.0f} |
| `curl -s -o FILE` | {c_wall:.1f} | {c_cpu:.1f} | {bc_wall:.0f} | {bc_cpu:.0f} |
| `curl -s -o FILE && sync FILE` (the floor with a flush) | {f_wall:.1f} | | {bf_wall:.0f} | |
"""
    sys.path.insert(0, str(ROOT / "bench"))
    from docsection import put_section
    put_section(section)
    print(section)


if __name__ == "__main__":
    main()
