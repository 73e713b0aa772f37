#!/usr/bin/env python3
"""One local edit on a large source, as an app that follows the cache file sees it (issue 27): how many times the
cache file is replaced (inotify IN_MOVED_TO), whether a replacement held the same bytes as the file before it, and
the CPU an app spends parsing each new version (json.load, as an inotify reader does), from `syncctl put` until the
change is settled (pushed, and the listing that shows it pulled) plus 3 quiet seconds.

For each build directory given (default .build/release), one after the other: the test tree's server
(Tests/integration/server/syncserver.py) serves RECORDS records (default 300,000; bench/make-listing.py's records),
syncd syncs them, then one record in the middle is edited with `syncctl put`. Prints a Markdown table.
Usage: bench/put-replacements.py [BUILD_DIR...]; RECORDS, OUT (work folder).
"""
import ctypes
import hashlib
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = int(os.environ.get("RECORDS", "300000"))
WORK = os.environ.get("OUT") or tempfile.mkdtemp(prefix="put-replacements-")
IN_MOVED_TO, IN_CLOEXEC = 0x80, 0o2000000
EVENT = struct.Struct("iIII")
libc = ctypes.CDLL(None, use_errno=True)


class Follower(threading.Thread):
    """An app following the cache file: on each replacement, reads and parses the new version."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.versions, self.cpu, self.stopping = path, [], 0.0, False
        self.fd = libc.inotify_init1(IN_CLOEXEC)
        assert libc.inotify_add_watch(self.fd, os.fsencode(os.path.dirname(path)), IN_MOVED_TO) >= 0

    def run(self):
        name = os.path.basename(self.path).encode()
        while not self.stopping:
            if not select.select([self.fd], [], [], 0.1)[0]:
                continue
            data, offset = os.read(self.fd, 65536), 0
            while offset < len(data):
                _, mask, _, length = EVENT.unpack_from(data, offset)
                moved = data[offset + EVENT.size: offset + EVENT.size + length].rstrip(b"\0")
                offset += EVENT.size + length
                if moved != name:
                    continue
                start = time.thread_time()
                with open(self.path, "rb") as f:
                    inode, raw = os.fstat(f.fileno()).st_ino, f.read()
                json.loads(raw)
                self.cpu += time.thread_time() - start
                self.versions.append((inode, hashlib.sha256(raw).hexdigest()))


def call(base, method, path, body=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    with urllib.request.urlopen(urllib.request.Request(base + path, data=data, method=method), timeout=120) as r:
        return r.read()


def run(build, records, n):
    work = os.path.join(WORK, f"build{n}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work + "/etc/sources.d")
    port_file = work + "/server.port"
    server = subprocess.Popen([sys.executable, ROOT + "/Tests/integration/server/syncserver.py", "--host", "127.0.0.1",
                               "--port", "0", "--port-file", port_file], stderr=subprocess.DEVNULL)
    daemon = None
    try:
        while not os.path.exists(port_file):
            time.sleep(0.05)
        base = "http://127.0.0.1:" + open(port_file).read().strip()
        call(base, "PUT", "/_control/collections/posts", records)
        with open(work + "/etc/syncd.conf", "w") as f:
            f.write(f"[Daemon]\nStateDirectory={work}/state\nCacheDirectory={work}/cache\nRuntimeDirectory={work}/run\n"
                    "[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
        with open(work + "/etc/sources.d/posts.source", "w") as f:
            f.write(f"[Source]\nURL={base}/posts\nWritable=yes\n")
        log = open(work + "/syncd.log", "w")
        daemon = subprocess.Popen([build + "/syncd", "--config-dir", work + "/etc"], stderr=log)
        socket, cache = work + "/run/io.syncd.Manager", work + "/cache/default/posts.json"
        while "posts: synced" not in open(work + "/syncd.log").read() or not os.path.exists(socket):
            assert daemon.poll() is None, open(work + "/syncd.log").read()
            time.sleep(0.1)
        size = os.path.getsize(cache)
        with open(cache, "rb") as f:
            before = (os.fstat(f.fileno()).st_ino, hashlib.sha256(f.read()).hexdigest())
        call(base, "DELETE", "/_control/requests")
        follower = Follower(cache)
        follower.start()
        middle = RECORDS // 2
        edited = dict(records[middle - 1], title="edited here")
        start = time.monotonic()
        subprocess.run([build + "/syncctl", "--socket", socket, "put", "posts", "-"], input=json.dumps(edited).encode(),
                       stdout=subprocess.DEVNULL, check=True)
        put_ms = (time.monotonic() - start) * 1000

        def settled():
            pushed = any(r["method"] == "PUT" for r in json.loads(call(base, "GET", "/_control/requests")))
            with open(cache, "rb") as f:
                f.seek(-200, os.SEEK_END)
                return pushed and b'"pending":[]' in f.read()
        while not settled():
            time.sleep(0.05)
        settled_s = time.monotonic() - start
        time.sleep(3)
        follower.stopping = True
        follower.join()
        versions = [before] + follower.versions
        identical = sum(1 for a, b in zip(versions, versions[1:]) if a[1] == b[1])
        return {"size": size, "replacements": len(follower.versions), "identical": identical, "cpu": follower.cpu,
                "put_ms": put_ms, "settled_s": settled_s}
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        server.terminate()
        server.wait()


def main():
    builds = sys.argv[1:] or [ROOT + "/.build/release"]
    os.makedirs(WORK, exist_ok=True)
    listing = WORK + "/listing.json"
    subprocess.run([sys.executable, ROOT + "/bench/make-listing.py", str(RECORDS), listing], check=True)
    records = json.load(open(listing))
    print("| build | records | cache file | replacements | of them identical to the file before | app CPU parsing them "
          "| put answered | settled after |")
    print("|---|---|---|---|---|---|---|---|")
    for n, build in enumerate(builds, 1):
        r = run(build, records, n)
        print(f"| {build} | {RECORDS:,} | {r['size'] / 1e6:.1f} MB | {r['replacements']} | {r['identical']} | "
              f"{r['cpu']:.2f} s | {r['put_ms']:.0f} ms | {r['settled_s']:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
