"""A run leaves no large write-ahead log behind for the next one to fold
(docs/architecture.md, "Storing listings")."""
import json


RECORDS = [{"id": n, "title": f"Post {n}", "body": "x" * 80} for n in range(30000)]


def wal_size(setup):
    wal = setup.db().with_name("state.db-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_a_changed_listing_leaves_no_large_write_ahead_log(server, setup):
    server.set_records("posts", RECORDS)
    setup.add_source("posts", server.url("posts"))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    listing = len(json.dumps(RECORDS, separators=(",", ":")))
    assert listing > 3 << 20
    assert wal_size(setup) <= 1 << 20, f"{wal_size(setup)} bytes of write-ahead log left for the next run"
    # Nothing was lost by folding it in: the next run confirms the whole listing.
    server.set_records("posts", RECORDS[1:])
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "posts: synced 29999 records (listing changed)" in r.stderr
    assert wal_size(setup) <= 1 << 20
    assert [rec["id"] for rec in setup.cache_doc("posts")["records"]] == list(range(1, 30000))
