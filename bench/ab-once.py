#!/usr/bin/env python3
"""Interleaved runs of several `syncd --once` builds and curl against one listing, for before/after
comparisons on a loaded machine (docs/benchmarks.md, "Speed of the first sync and of the 304").

Usage: bench/ab-once.py first|304|after URL RUNS SYNCD...
  first: each round removes every build's state and cache, then runs each build once (a first sync) and
         `curl -s -o FILE URL`;
  304:   each build first syncs once; each round then runs each build once (a 304) and
         `curl -s -o /dev/null --etag-compare ETAG URL`;
  after: each round removes every build's state and cache, runs each build once untimed (a first sync)
         and times its next run (the 304 right after a first sync), then `curl --etag-compare` as in 304.
Prints per program the wall time (median, minimum, first quartile, in ms) and the CPU time (user + system,
from wait4's rusage: load-independent as long as nothing is starved) of its runs."""
import os, shutil, statistics, subprocess, sys, time

mode, url, runs, builds = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
assert mode in ("first", "304", "after") and builds, __doc__
work = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "ab-once")


def setup(index):
    directory = f"{work}/{index}"
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory + "/etc/sources.d")
    with open(directory + "/etc/syncd.conf", "w") as f:
        f.write(f"[Daemon]\nStateDirectory={directory}/state\nCacheDirectory={directory}/cache\nRuntimeDirectory={directory}/run\n")
    with open(directory + "/etc/sources.d/posts.source", "w") as f:
        f.write(f"[Source]\nURL={url}\n")
    return directory


wall = {name: [] for name in builds + ["curl"]}
cpu = {name: [] for name in builds + ["curl"]}


def run(name, command):
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall[name].append((time.perf_counter() - start) * 1000)
    cpu[name].append((usage.ru_utime + usage.ru_stime) * 1000)
    if status != 0:
        sys.exit(f"{' '.join(command)} failed (wait status {status})")


directories = [setup(i) for i in range(len(builds))]
if mode != "first":
    for build, directory in zip(builds, directories):
        subprocess.run([build, "--once", "--config-dir", directory + "/etc"], check=True, stderr=subprocess.DEVNULL)
    subprocess.run(["curl", "-s", "-o", "/dev/null", "--etag-save", work + "/etag", url], check=True)
for _ in range(runs):
    for build, directory in zip(builds, directories):
        if mode != "304":
            shutil.rmtree(directory + "/state", ignore_errors=True)
            shutil.rmtree(directory + "/cache", ignore_errors=True)
        if mode == "after":
            subprocess.run([build, "--once", "--config-dir", directory + "/etc"], check=True, stderr=subprocess.DEVNULL)
        # Untimed: every dirty page written back first. A first sync flushes its cache file, and that flush
        # also waited for whatever the previous program left unwritten (curl's 22.6 MB): without this the build
        # run first in each round measured ~25 ms slower than the same build run second.
        os.sync()
        run(build, [build, "--once", "--config-dir", directory + "/etc"])
    os.sync()
    if mode == "first":
        run("curl", ["curl", "-s", "-o", work + "/curl.out", url])
    else:
        run("curl", ["curl", "-s", "-o", "/dev/null", "--etag-compare", work + "/etag", url])
for name in wall:
    w, c = sorted(wall[name]), cpu[name]
    print(f"{name:40} wall median {statistics.median(w):6.1f}  min {w[0]:6.1f}  p25 {w[len(w) // 4]:6.1f}"
          f"   cpu median {statistics.median(c):6.1f}  min {min(c):6.1f}")
