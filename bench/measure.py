#!/usr/bin/env python3
"""Runs one command and measures what it costs, independent of the machine's load where possible:
wall time, peak RSS of the largest process it started (getrusage RUSAGE_CHILDREN ru_maxrss),
bytes it caused to be written to storage (/proc/self/io write_bytes, which the kernel adds to the
parent when it reaps a child; cancelled_write_bytes of files deleted before writeback is reported
too), and the disk space allocated (st_blocks) under the given directories, sampled every 5 ms while
it runs (peak) and after it ends (end). WAL and journal files are included: every file is counted.

Usage: measure.py [--dirs DIR,DIR...] -- COMMAND ARGS...   (prints one JSON object)"""
import json, os, resource, subprocess, sys, time

def io():
    fields = dict(line.split(": ") for line in open("/proc/self/io").read().split("\n") if line)
    return int(fields["write_bytes"]), int(fields["cancelled_write_bytes"])

def allocated(dirs):
    total = 0
    for top in dirs:
        for root, _, files in os.walk(top):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_blocks * 512
                except FileNotFoundError:  # renamed or unlinked between listing and stat
                    pass
    return total

def main():
    args = sys.argv[1:]
    dirs = []
    if args[:1] == ["--dirs"]:
        dirs = [d for d in args[1].split(",") if d]
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    w0, c0 = io()
    start = time.monotonic()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    peak = allocated(dirs)
    while child.poll() is None:
        peak = max(peak, allocated(dirs))
        time.sleep(0.005)
    wall = time.monotonic() - start
    w1, c1 = io()
    end = allocated(dirs)
    print(json.dumps({"rc": child.returncode, "wall_s": wall,
                      "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                      "write_bytes": w1 - w0, "cancelled_write_bytes": c1 - c0,
                      "peak_disk": max(peak, end), "end_disk": end}))

if __name__ == "__main__":
    main()
