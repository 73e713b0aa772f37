"""A collection that changes while syncd pages through it (a record moves from page 1 to page 2): the
listing is refused with a message saying so, retried with backoff, and taken once it is consistent; a
collection that grows a next page syncd does not follow makes the source stale, its cache kept."""
import json

from conftest import wait_for
from test_syncctl import syncctl


def test_a_duplicate_id_across_pages_is_retried_with_backoff(server, setup, daemons):
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=500ms\n[Network]\nReachabilityIntervalSec=0\n")
    server.set_records("posts", [{"id": 1}, {"id": 2}, {"id": 2}, {"id": 3}])
    server.options("posts", perPage=2)
    setup.add_source("posts", server.url("posts"), Pagination="link")
    d = daemons(setup)
    d.wait_log('repeats ID "2" (2 pages): '
               "the collection most likely changed on the server while it was being paged; retrying", timeout=15)
    # The server settles; the backoff retry (no other trigger) takes the consistent listing.
    server.set_records("posts", [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}])
    d.wait_log("posts: synced 4 records", timeout=15)
    assert [r["id"] for r in setup.cache_doc("posts")["records"]] == [1, 2, 3, 4]


def test_an_unfollowed_next_page_makes_the_source_stale_with_the_message_and_keeps_the_cache(server, setup, daemons):
    setup.write_main("[Network]\nReachabilityIntervalSec=0\n")
    server.set_records("posts", [{"id": i} for i in range(1, 3)])
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    before = setup.cache_file("posts").read_bytes()
    server.set_records("posts", [{"id": i} for i in range(1, 6)])
    server.options("posts", perPage=2)
    assert syncctl(setup, "refresh", "posts", "--wait").returncode != 0
    message = 'the response has a Link: rel="next" header but Pagination=none: only the first page was received; set Pagination=link'
    d.wait_log(message)
    status = json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]
    assert (status["state"], status["stale"], status["lastError"], status["records"]) == ("error", True, message, 2)
    assert message in syncctl(setup, "status").stdout
    assert setup.cache_file("posts").read_bytes() == before
