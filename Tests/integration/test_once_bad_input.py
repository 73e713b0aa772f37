"""syncd(8) GUARANTEES 2: a bad response never replaces the cache. Each case: the previous file stays
byte-for-byte, no temporary file is left, the reason is stored, and --once exits 1 with a reason line."""
import json
import sqlite3

import pytest

from conftest import POSTS, assert_refused_keeping_the_copy

CASES = [
    # name, fault, expected fragment of the reason
    ("http-503", dict(kind="status", status=503, body="<h1>down</h1>"), "HTTP 503"),
    ("http-404", dict(kind="status", status=404, body="nope"), "HTTP 404"),
    ("html-200", dict(kind="body", body="<!DOCTYPE html><html><body>Error</body></html>", contentType="text/html"),
     "invalid JSON at byte 0"),
    ("truncated", dict(kind="truncate"), "connection closed before the whole body arrived"),
    ("invalid-json", dict(kind="body", body='[{"id":1,"title":}]'), "invalid JSON"),
    ("trailing-bytes", dict(kind="body", body='[{"id":1}]xyz'), "trailing bytes"),
    ("not-an-array", dict(kind="body", body='{"id":1}'), "top level is not an array"),
    ("record-not-object", dict(kind="body", body='[{"id":1}, 2]'), "record 1"),
    ("record-without-id", dict(kind="body", body='[{"id":1}, {"title":"x"}]'), "no ID field"),
    ("duplicate-id", dict(kind="body", body='[{"id":1}, {"id":2}, {"id":1}]'), "repeats ID \"1\""),
    ("duplicate-id-mixed-types", dict(kind="body", body='[{"id":1}, {"id":"1"}]'), "repeats ID \"1\""),
    ("invalid-utf8", dict(kind="body", hex="5b7b226964223a312c2274223a22c328227d5d"), "invalid UTF-8"),
    ("stall", dict(kind="stall", seconds=8), "timed out"),
]


def seed(server, setup, **source_keys):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), **source_keys)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    return setup.cache_file("posts").read_bytes()


def last_error(setup):
    with sqlite3.connect(setup.db()) as db:
        return db.execute("SELECT last_error FROM sources WHERE name='posts'").fetchone()[0]


@pytest.mark.parametrize("name,fault,reason", CASES, ids=[c[0] for c in CASES])
def test_bad_response_keeps_previous_copy(server, setup, name, fault, reason):
    before = seed(server, setup, TimeoutSec="2s")
    server.fault("posts", **fault)
    r = setup.syncd("--once")
    assert_refused_keeping_the_copy(r, setup, before, reason)
    assert reason in last_error(setup)


def test_body_over_max_bytes_is_aborted_early(server, setup):
    before = seed(server, setup, MaxBytes="64K")
    server.fault("posts", kind="huge", bytes=50_000_000)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "larger than MaxBytes=65536" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
    # Aborted early: the server did not get to send anywhere near the 50 MB it offered.
    assert "(kept 2 cached records)" in r.stderr


@pytest.mark.release_binaries
def test_a_record_larger_than_max_record_bytes_is_refused_at_refresh_time_never_published(server, setup):
    # About 70 MB in one record, within MaxBytes=256M: refused while it streams in, since `syncctl get`
    # and List could not return it (never "published but not found").
    before = seed(server, setup)
    server.fault("posts", kind="bigRecord", bytes=70_000_000)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert ("posts: response rejected: record 1 of the listing is larger than MaxRecordBytes=33554432 bytes (found at byte "
            in r.stderr), r.stderr
    assert ("syncctl get and the List call could not return it, so the listing is not stored and the previous copy stays: "
            "ask the server for smaller records (32 MiB is the most syncd serves) (kept 2 cached records)") in r.stderr, r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
    assert "larger than MaxRecordBytes=" in last_error(setup)


def test_empty_listing_refused_unless_allowed(server, setup):
    before = seed(server, setup)
    server.set_records("posts", [])
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "empty listing refused: the cache holds 2 records" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    setup.add_source("posts", server.url("posts"), AllowEmpty="yes")
    assert setup.syncd("--once").returncode == 0
    assert setup.cache_doc("posts")["records"] == []


def test_failing_page_fails_the_whole_listing(server, setup):
    records = [{"id": i} for i in range(1, 8)]
    server.set_records("posts", records)
    server.options("posts", perPage=3)
    setup.add_source("posts", server.url("posts"), Pagination="link")
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    server.set_records("posts", records + [{"id": 99}])
    server.fault("posts", kind="status", status=500, page=2)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "page 2: HTTP 500" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    with sqlite3.connect(setup.db()) as db:
        assert db.execute("SELECT sum(records) FROM chunks WHERE source = 'posts'").fetchone()[0] == 7


def test_max_bytes_bounds_the_whole_paginated_listing(server, setup):
    records = [{"id": i, "title": f"Post {i}", "body": "x" * 200} for i in range(1, 21)]   # ~5 KB in 10 pages
    server.set_records("posts", records[:4])
    server.options("posts", perPage=2)
    setup.add_source("posts", server.url("posts"), Pagination="link", MaxBytes="1K")
    assert setup.syncd("--once").returncode == 0          # 4 records, 2 pages: within 1 KiB
    before = setup.cache_file("posts").read_bytes()
    assert json.loads(before)["etag"] is None               # no validator stands for a paginated listing
    server.set_records("posts", records)                    # every page is small, all of them are not
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "the listing is larger than MaxBytes=1024 bytes" in r.stderr and "all pages together" in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
    pages = [q for q in server.requests("/posts") if q["method"] == "GET"]
    assert len(pages) < 2 + 10                              # it stopped before fetching every page


def test_duplicate_across_pages_is_refused(server, setup):
    server.set_records("posts", [{"id": 1}, {"id": 2}, {"id": 1}])
    server.options("posts", perPage=2)
    setup.add_source("posts", server.url("posts"), Pagination="link")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert 'repeats ID "1"' in r.stderr
    assert not setup.cache_file("posts").exists()
