"""How often a local change replaces the cache file (syncd.cache(5), syncd.local-changes(7)): one change to a large
source replaces it at most twice (queued, settled by the listing), never with the same bytes, and a burst of
changes to a large file is written once for all of them, shown within moments."""
import ctypes
import hashlib
import json
import os
import select
import struct
import threading

import pytest

from conftest import wait_for
from test_outbox import put, start, writes

IN_MOVED_TO = 0x80
IN_CLOEXEC = 0o2000000
EVENT = struct.Struct("iIII")
libc = ctypes.CDLL(None, use_errno=True)

pytestmark = pytest.mark.release_binaries


class Versions:
    """Each version of one cache file renamed into its folder, as (inode, SHA-256 of its bytes), read as the
    rename is reported. Two reports read after the same later rename give the same inode, never a false
    "identical content"."""

    def __init__(self, path):
        self.path = str(path)
        self.seen = []
        self.fd = libc.inotify_init1(IN_CLOEXEC)
        assert self.fd >= 0 and libc.inotify_add_watch(self.fd, os.fsencode(os.path.dirname(self.path)), IN_MOVED_TO) >= 0
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        name = os.path.basename(self.path).encode()
        while not self.stopping:
            if not select.select([self.fd], [], [], 0.1)[0]:
                continue
            data = os.read(self.fd, 65536)
            offset = 0
            while offset < len(data):
                _, mask, _, length = EVENT.unpack_from(data, offset)
                moved = data[offset + EVENT.size: offset + EVENT.size + length].rstrip(b"\0")
                offset += EVENT.size + length
                if mask & IN_MOVED_TO and moved == name:
                    with open(self.path, "rb") as f:
                        self.seen.append((os.fstat(f.fileno()).st_ino, hashlib.sha256(f.read()).hexdigest()))

    def stop(self):
        self.stopping = True
        self.thread.join()
        os.close(self.fd)
        return self.seen


def digest(path):
    with open(path, "rb") as f:
        return os.fstat(f.fileno()).st_ino, hashlib.sha256(f.read()).hexdigest()


def large_source(setup, server, count=50_000):
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n[Network]\nDebounceSec=300ms\nReachabilityIntervalSec=0\n")
    server.set_records("posts", [{"id": i, "title": f"post {i}", "body": "x" * 40} for i in range(1, count + 1)])
    setup.add_source("posts", server.url("posts"), Writable="yes")


def test_one_put_on_a_large_source_replaces_its_file_at_most_twice_never_with_the_same_bytes(server, setup, daemons):
    large_source(setup, server)
    d = start(setup, daemons)
    path = setup.cache_file("posts")
    assert os.path.getsize(path) > 256 << 10
    before = digest(path)
    versions = Versions(path)

    r = put(setup, {"id": 25_000, "title": "edited here", "body": "y"})
    assert r.returncode == 0, r.stderr
    # Pushed (PUT), then settled by the listing that shows the server's copy.
    wait_for(lambda: ("PUT", "/posts/25000") in writes(server), what="the push")
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], timeout=20, what="the change settled in the cache file")
    d.stop()          # a rewrite still scheduled is done before the daemon exits
    seen = versions.stop()

    assert next(rec for rec in server.records("posts") if rec["id"] == 25_000)["title"] == "edited here"
    doc = setup.cache_doc("posts")
    assert len(doc["records"]) == 50_000 and doc["records"][24_999]["title"] == "edited here"
    assert 1 <= len(seen) <= 2, f"{len(seen)} replacements of the cache file for one put"
    versions_by_content = {}
    for inode, content in [before] + seen:
        versions_by_content.setdefault(content, set()).add(inode)
    assert all(len(inodes) == 1 for inodes in versions_by_content.values()), "a replacement held the same bytes"


def test_a_burst_of_puts_on_a_large_file_is_shown_by_it_without_a_replacement_per_put(server, setup, daemons):
    large_source(setup, server, count=20_000)
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)          # the server is down: every change stays pending
    path = setup.cache_file("posts")
    versions = Versions(path)
    ids = []
    for n in range(30):
        r = put(setup, {"title": f"offline {n}"})
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
        ids.append(r.stdout.strip().split()[-1])
    # Within moments the file shows every change acknowledged, in the order they were made.
    doc = wait_for(lambda: (lambda doc: doc if doc["pending"] == ids else None)(setup.cache_doc("posts")),
                   what="every put in the cache file")
    assert [rec["title"] for rec in doc["records"][20_000:]] == [f"offline {n}" for n in range(30)]
    seen = versions.stop()
    # Reports read after the same later rename repeat it; otherwise each version's bytes differ from the one before.
    # (Counting inodes against contents would not do: the file system may give a freed inode to a later version.)
    versions = [v for i, v in enumerate(seen) if i == 0 or v != seen[i - 1]]
    assert all(a[1] != b[1] for a, b in zip(versions, versions[1:])), "a replacement held the same bytes"
