"""A collection that changes while syncd pages through it (a record moves from page 1 to page 2): the
listing is refused with a message saying so, retried with backoff, and taken once it is consistent."""
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


def test_an_unfollowed_next_page_shows_in_the_status_and_is_logged_once(server, setup, daemons):
    setup.write_main("[Network]\nReachabilityIntervalSec=0\n")
    server.set_records("posts", [{"id": i} for i in range(1, 6)])
    server.options("posts", perPage=2)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    warning = 'the response has a Link: rel="next" header but Pagination=none, so only its first page is kept; set Pagination=link'
    assert d.output().count(warning) == 1
    status = json.loads(syncctl(setup, "status", "--json").stdout)["sources"][0]
    assert status["warnings"] == [warning]
    assert "    warning: " + warning in syncctl(setup, "status").stdout
