"""SPEC rule 8 and startup recovery: disk faults keep the old copy; damaged own files are moved aside."""
import os
import sqlite3
import subprocess

import pytest

from conftest import POSTS, fill_filesystem

MORE = POSTS + [{"id": i, "title": f"Post {i}", "body": "x" * 300} for i in range(3, 100)]


def seed(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    return setup.cache_file("posts").read_bytes()


@pytest.fixture
def small_cache(setup):
    """The account's cache folder on a 64 KiB tmpfs."""
    folder = setup.cache / setup.account
    folder.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0750", "tmpfs", str(folder)], check=True)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def test_cache_directory_full_keeps_old_copy(server, setup, small_cache):
    before = seed(server, setup)
    filler = small_cache / "filler"
    fill_filesystem(filler)
    server.set_records("posts", MORE)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "posts: Failed to write cache file" in r.stderr
    assert "No space left on device" in r.stderr
    assert "keeping the previous copy" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
    # Space comes back: the next run publishes the stored listing even though the server says nothing changed.
    filler.unlink()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == MORE


def test_read_only_cache_directory_keeps_old_copy(server, setup, small_cache):
    before = seed(server, setup)
    subprocess.run(["mount", "-o", "remount,ro", str(small_cache)], check=True)
    server.set_records("posts", MORE)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "Read-only file system" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []


def test_damaged_cache_file_is_moved_aside_and_rebuilt(server, setup):
    seed(server, setup)
    path = setup.cache_file("posts")
    path.write_bytes(b'{"schemaVersion":1,"source":"posts","records":[{"id":1')
    server.fault("posts", kind="status", status=503)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "cache file was damaged (document is incomplete); moved it to" in r.stderr
    aside = [p for p in path.parent.iterdir() if p.name.startswith("posts.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes().endswith(b'{"id":1')
    # Rebuilt from the store while the server is failing: the cached copy is served from the first moment.
    assert setup.cache_doc("posts")["records"] == POSTS


def test_unknown_schema_version_is_moved_aside(server, setup):
    seed(server, setup)
    path = setup.cache_file("posts")
    path.write_text('{"schemaVersion":7,"source":"posts","records":[]}\n')
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "unknown schemaVersion" in r.stderr
    assert setup.cache_doc("posts")["schemaVersion"] == 1


@pytest.mark.parametrize("damage", ["garbage", "future-version"])
def test_damaged_database_is_moved_aside_and_rebuilt(server, setup, damage):
    seed(server, setup)
    db = setup.db()
    if damage == "garbage":
        for suffix in ("-wal", "-shm"):
            if os.path.exists(str(db) + suffix):
                os.unlink(str(db) + suffix)
        db.write_bytes(b"this is not a database" * 100)
    else:
        with sqlite3.connect(db) as c:
            c.execute("PRAGMA user_version = 99")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "was unusable" in r.stderr and "moved it to" in r.stderr
    aside = [p for p in db.parent.iterdir() if p.name.startswith("state.db.corrupt-")]
    assert aside
    assert setup.cache_doc("posts")["records"] == POSTS
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT sum(records) FROM chunks WHERE source = 'posts'").fetchone()[0] == 2
