"""A local change on a large listing copies the chunks it does not touch from the previous cache file
(docs/architecture.md, "Storing listings"): the file it writes is the one a full rebuild writes, and the
change reaches the server."""
import json
import sqlite3

from conftest import wait_for
from test_outbox import put, start, writable

RECORDS = [{"id": i, "title": f"Post {i}", "body": "y" * 100} for i in range(1, 20_001)]


def records_section(data):
    """The document from "records":[ on: the header before it carries savedAt and the ETag."""
    return data[data.index(b'"records":['):]


def test_a_put_on_a_large_listing_equals_a_full_rebuild_and_reaches_the_server(server, setup, daemons):
    writable(setup, server, version=False, records=RECORDS)
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n")
    server.fault("posts", kind="status", status=500, method="PUT")      # the change stays queued, the listing is pulled
    d = start(setup, daemons)
    first = setup.cache_file("posts").read_bytes()
    edited = {"id": 10_000, "title": "edited locally", "body": "z"}
    r = put(setup, edited)
    assert r.returncode == 0, r.stderr
    # A file over 256 KiB is rewritten once for a burst of changes, moments after the first (docs/local-changes.md).
    after_put = wait_for(lambda: (lambda data: data if data != first else None)(setup.cache_file("posts").read_bytes()),
                         what="the put in the cache file")
    doc = json.loads(after_put)
    assert doc["records"][9_999] == edited and doc["pending"] == [10_000]
    assert doc["records"][:9_999] == RECORDS[:9_999] and doc["records"][10_000:] == RECORDS[10_000:]
    # Only the chunk holding record 10000 (chunk 19) differs; the bytes before it are the first file's.
    chunk_19 = first.index(b'{"id":9729,')
    assert after_put[:chunk_19] == first[:chunk_19]
    with sqlite3.connect(f"file:{setup.db()}?mode=ro", uri=True) as db:
        overlaid = [seq for seq, data in db.execute("SELECT seq, data FROM chunks WHERE source = 'posts' ORDER BY seq")
                    if b'"title":"Post 10000"' in data]
    db.close()
    assert overlaid == [19]                 # the server's copy of record 10000 is inline in its chunk only
    d.stop()

    # A full rebuild of the same listing and outbox: without its cache file the listing is forgotten and
    # fetched whole, and the refresh writes every record through the writer (the PUT fails again; a 500 for one change still lets the listing be pulled).
    setup.cache_file("posts").unlink()
    r = setup.syncd("--once")
    assert "HTTP 500 from PUT" in r.stderr and "synced 20000 records" in r.stderr, r.stderr
    rebuilt = setup.cache_file("posts").read_bytes()
    assert records_section(rebuilt) == records_section(after_put)

    server.clear_fault("posts")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert server.records("posts")[9_999] == edited                     # the server's own data
    wait_for(lambda: setup.cache_doc("posts")["pending"] == [], what="pending to empty")
    assert setup.cache_doc("posts")["records"][9_999] == edited
