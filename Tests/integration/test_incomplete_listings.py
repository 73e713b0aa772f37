"""Nothing cut short in silence (syncd.conf(5), Pagination=): a last page that signals more data than syncd
followed makes the refresh incomplete — the cache file kept byte for byte, `syncd --once` exit 1, a message
naming the signal and the key to set — and Pagination=page and offset fetch every page. The test server
answers with each signal; Kinto with its own Next-Page header."""
import json

import pytest

from realservers import Kinto
from recipes import recipe

RECORDS = [{"id": i, "title": f"P{i}"} for i in range(1, 6)]
NONE = "but Pagination=none: only the first page was received"

SIGNALS = [
    ({"extraHeaders": {"Link": '</posts?page=2>; rel="next"'}},
     f'the response has a Link: rel="next" header {NONE}; set Pagination=link'),
    ({"extraHeaders": {"Next-Page": "/posts?_token=abc"}}, f"the response has a Next-Page header {NONE}; set Pagination=header"),
    ({"extra": {"next": "/posts?page=2"}}, f"the response has a next page at /next {NONE}; set Pagination=body and NextPath=/next"),
    ({"extra": {"next_url": "/posts?_next=3"}},
     f"the response has a next page at /next_url {NONE}; set Pagination=body and NextPath=/next_url"),
    ({"extra": {"links": {"next": "/posts?page=2"}}},
     f"the response has a next page at /links/next {NONE}; set Pagination=body and NextPath=/links/next"),
    ({"extra": {"next_cursor": "abc"}},
     f"the response has a next page's cursor at /next_cursor {NONE}; set Pagination=cursor, CursorPath=/next_cursor "
     "and CursorParameter= to the query parameter the server reads it from"),
    ({"extra": {"meta": {"next_cursor": "abc"}}},
     f"the response has a next page's cursor at /meta/next_cursor {NONE}; set Pagination=cursor, "
     "CursorPath=/meta/next_cursor and CursorParameter= to the query parameter the server reads it from"),
    ({"extra": {"has_more": True}},
     f"the response has /has_more true {NONE}; set Pagination= to the way the server pages "
     "('syncd --probe' shows what it sends) and HasMorePath=/has_more"),
    ({"extra": {"count": 2000}},
     f"the response has a total of 2000 at /count {NONE} (5 records); set Pagination=page or Pagination=offset, with TotalPath=/count"),
    ({"extraHeaders": {"Content-Range": "items 0-4/2000"}},
     f"the response has a Content-Range of items 0-4 of 2000 {NONE} (5 records); set Pagination=offset"),
]


def synced(setup):
    """Runs `syncd --once`, which must succeed; returns the cache file's bytes."""
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    return setup.cache_file("posts").read_bytes()


def refused(setup, before, message):
    """Runs `syncd --once`, which must fail with `message` and leave the cache file as `before`."""
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert f"posts: {message}" in r.stderr
    assert "synced" not in r.stderr
    assert setup.cache_file("posts").read_bytes() == before


@pytest.mark.parametrize("options,message", SIGNALS, ids=[
    "link", "next-page", "next", "next_url", "links.next", "next_cursor", "meta.next_cursor", "has_more", "count",
    "content-range"])
def test_a_signal_of_more_data_keeps_the_cache_and_fails_once(server, setup, options, message):
    server.set_records("posts", RECORDS[:3])
    server.options("posts", wrapper="data")
    setup.add_source("posts", server.url("posts"), RecordsPath="/data")
    before = synced(setup)
    server.set_records("posts", RECORDS)                               # a green refresh would change the file
    server.options("posts", wrapper="data", **options)
    refused(setup, before, message)


def test_a_signal_of_another_kind_on_the_last_followed_page_counts(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", perPage=2, extra={"next": "/posts?page=9"})
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="link")
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert ("posts: page 3, the last one Pagination=link found, has a next page at /next: only part of the listing was "
            "received (5 records in 3 pages); set Pagination=body and NextPath=/next") in r.stderr
    assert not setup.cache_file("posts").exists()


@pytest.mark.parametrize("count,keys,paths", [
    (7, {"Pagination": "page"}, ["/posts", "/posts?page=2", "/posts?page=3"]),             # ends on the short page
    (6, {"Pagination": "page", "TotalPath": "/meta/count"}, ["/posts", "/posts?page=2"]),  # at the total, no empty page
], ids=["short-page", "total"])
def test_page_numbers_fetch_every_page(server, setup, count, keys, paths):
    records = [{"id": i, "title": f"P{i}"} for i in range(1, count + 1)]
    server.set_records("posts", records)
    server.options("posts", wrapper="data", perPage=3, links=False)
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", **keys)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == records
    assert [q["path"] for q in server.requests("/posts")] == paths


def test_offsets_fetch_every_page_even_when_the_server_caps_the_limit(server, setup):
    records = [{"id": i, "title": f"P{i}"} for i in range(1, 9)]
    server.set_records("posts", records)
    server.options("posts", wrapper="data", perPage=3, paging="offset", links=False)
    setup.add_source("posts", server.url("posts") + "?limit=10", RecordsPath="/data", Pagination="offset", TotalPath="/meta/count")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == records
    assert [q["path"] for q in server.requests("/posts")] == [
        "/posts?limit=10", "/posts?limit=10&offset=3", "/posts?limit=10&offset=6"]


def test_a_total_the_followed_pages_fall_short_of_is_retried_with_the_reason(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", perPage=2, links=False, extra={"count": 9})
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="page")
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert ("posts: the listing ended after 3 pages with 5 records, but its last page has a total of 9 at /count: "
            "the collection most likely changed on the server while it was paged; retrying") in r.stderr
    assert not setup.cache_file("posts").exists()


def test_has_more_false_ends_a_listing_whose_pages_always_name_a_next_one(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", extra={"next": "/posts?again=1", "has_more": False})
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="body")
    r = setup.syncd("--once")                                          # without HasMorePath=: a loop
    assert r.returncode == 1 and "page 3 links back to" in r.stderr, r.stderr
    assert not setup.cache_file("posts").exists()
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="body", HasMorePath="/has_more")
    server.clear_requests()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == RECORDS
    assert [q["path"] for q in server.requests("/posts")] == ["/posts"]


def test_a_total_path_without_a_number_fails_and_keeps_the_cache(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", perPage=2, links=False)
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="page")
    before = synced(setup)
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="page", TotalPath="/meta/total")
    refused(setup, before, "page 1: the value at TotalPath=/meta/total is not a whole number; point TotalPath= at the "
            "collection's record count, or leave it empty")


def test_paging_members_larger_than_4_mib_fail_the_listing_and_keep_the_cache(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data")
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", Pagination="body")
    before = synced(setup)
    server.options("posts", wrapper="data", extra={"blob": "x" * (4 << 20)})
    refused(setup, before, "the page's members besides its records are larger than 4 MiB; with Pagination=body they "
            "are read to find the next page")


def test_the_link_pagination_recipe_fetches_every_page_with_its_token(server, setup, tmp_path):
    """syncd.conf(5)'s `# Link pagination` recipe, as printed but for this machine's addresses and token file."""
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "gh-token").write_text("t0ken\n")
    server.set_records("posts", RECORDS)
    server.options("posts", perPage=2, byToken={"t0ken": RECORDS})
    (setup.config / "sources.d" / "posts.source").write_text(recipe(
        "Link pagination", URL=server.url("posts"), AllowedOrigins=f"http://localhost:{server.port}"))
    r = setup.syncd("--once", env={"CREDENTIALS_DIRECTORY": str(credentials)})
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == RECORDS
    pages = [req["path"] for req in server.requests("/posts")]
    assert pages == ["/posts?per_page=100", "/posts?page=2", "/posts?page=3"]
    assert all(req["headers"]["authorization"] == "Bearer t0ken" for req in server.requests("/posts"))


def test_probe_names_the_signals_and_the_settings(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", perPage=2, extra={"count": 5})
    setup.add_source("posts", server.url("posts"), RecordsPath="/data")
    r = setup.syncd("--probe", "posts")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.splitlines() == [
        f"posts: GET {server.url('posts')} (Pagination=none, RecordsPath=/data)",
        "posts: HTTP 200, 2 records on this page",
        'posts: found a Link: rel="next" header',
        "posts: found a total of 5 at /count",
        "posts: to fetch every page: set Pagination=link",
    ]
    assert not setup.cache_file("posts").exists()
    r = setup.syncd("--probe", "nothing")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f'syncd: no source named "nothing" is configured in {setup.config} (sources: posts)\n'
    setup.add_source("gone", server.url("gone"))
    r = setup.syncd("--probe", "gone")
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "gone: HTTP 404: not a listing page; check URL= and the credentials, then probe again"


@pytest.mark.parametrize("keys, follows", [
    (dict(Pagination="link"), "Pagination=link, as configured, follows them: the settings fit"),
    (dict(Pagination="page", TotalPath="/count"), "Pagination=page, as configured, follows them: the settings fit"),
])
def test_probe_of_a_source_set_up_right_says_the_settings_fit(server, setup, keys, follows):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", perPage=2, extra={"count": 5})
    setup.add_source("posts", server.url("posts"), RecordsPath="/data", **keys)
    r = setup.syncd("--probe", "posts")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.splitlines()[-1] == f"posts: {follows}"


def test_probe_of_a_wrapped_listing_without_records_path_says_where_the_records_are(server, setup):
    server.set_records("posts", RECORDS)
    server.options("posts", wrapper="data", perPage=2)
    setup.add_source("posts", server.url("posts"))                     # RecordsPath= left out
    r = setup.syncd("--probe", "posts")
    assert (r.returncode, r.stderr) == (1, ""), r.stderr
    assert r.stdout.splitlines()[-1] == "posts: the page is an object whose records are at /data: set RecordsPath=/data, then probe again"
    r = setup.syncd("--once")
    assert r.returncode == 1 and "top level is not an array; if the records are inside an object, set RecordsPath= to them" in r.stderr


@pytest.fixture
def kinto(tmp_path):
    s = Kinto(tmp_path / "kinto", page_size=2)
    yield s
    s.stop()


def test_a_kinto_listing_with_a_next_page_header_is_incomplete_under_pagination_none_and_link(kinto, setup):
    kinto.create([{"id": "a", "title": "one"}])
    setup.add_source("notes", kinto.url(), RecordsPath="/data")
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("notes").read_bytes()
    assert [r["id"] for r in json.loads(before)["records"]] == [r["id"] for r in kinto.records()] == ["a"]
    kinto.create([{"id": "b", "title": "two"}, {"id": "c", "title": "three"}])
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert ("notes: the response has a Next-Page header but Pagination=none: only the first page was received; "
            "set Pagination=header") in r.stderr
    assert setup.cache_file("notes").read_bytes() == before
    setup.add_source("notes", kinto.url(), RecordsPath="/data", Pagination="link")   # Kinto sends no Link header
    r = setup.syncd("--once")
    assert r.returncode == 1, r.stderr
    assert ("notes: page 1, the last one Pagination=link found, has a Next-Page header: only part of the listing was "
            "received (2 records in 1 page); set Pagination=header") in r.stderr
    assert setup.cache_file("notes").read_bytes() == before
    assert len(kinto.records()) == 3
