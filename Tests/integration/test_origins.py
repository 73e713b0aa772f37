"""Where syncd sends requests and its token (syncd(8), "Origins"): pages, redirects and item URLs stay on
URL='s origin unless AllowedOrigins= says otherwise, the token goes to URL='s origin only, file: URLs are
only ever the one URL= names and never a FIFO, a whole listing has a deadline, and oversized validators are
not kept. A second server on 127.0.0.2 records what reaches another host."""
import os

import pytest

from conftest import POSTS, SyncServer


@pytest.fixture
def other(tmp_path):
    s = SyncServer(tmp_path / "other", host="127.0.0.2")
    yield s
    s.stop()


@pytest.fixture
def creds(tmp_path):
    d = tmp_path / "creds"
    d.mkdir()
    (d / "api-token").write_text("s3cr3t-token\n")
    return {"CREDENTIALS_DIRECTORY": str(d)}


def test_a_next_page_on_another_host_is_refused_and_gets_nothing(server, other, setup, creds):
    server.set_records("posts", POSTS)
    other.set_records("posts", [{"id": 3, "title": "elsewhere"}])
    server.options("posts", nextLink=other.url("posts"))
    setup.add_source("posts", server.url("posts"), Pagination="link", BearerTokenCredential="api-token")
    r = setup.syncd("--once", env=creds)
    assert r.returncode == 1
    assert (f"page 2: refusing to request {other.url('posts')}: it is on another origin (http://127.0.0.2:{other.port}) "
            f"than URL= (http://127.0.0.1:{server.port}); add http://127.0.0.2:{other.port} to AllowedOrigins=") in r.stderr
    assert other.requests() == []
    assert not setup.cache_file("posts").exists()


def test_allowed_origins_get_the_pages_but_never_the_token(server, other, setup, creds):
    server.set_records("posts", POSTS)
    other.set_records("posts", [{"id": 3, "title": "elsewhere"}])
    server.options("posts", nextLink=other.url("posts"))
    setup.add_source("posts", server.url("posts"), Pagination="link", BearerTokenCredential="api-token",
                     AllowedOrigins=f"http://127.0.0.2:{other.port}")
    r = setup.syncd("--once", env=creds)
    assert r.returncode == 0, r.stderr
    assert [p["id"] for p in setup.cache_doc("posts")["records"]] == [1, 2, 3]
    assert server.requests("/posts")[0]["headers"]["authorization"] == "Bearer s3cr3t-token"
    assert len(other.requests("/posts")) == 1
    assert "authorization" not in other.requests("/posts")[0]["headers"]


def test_a_redirect_to_another_host_is_refused(server, other, setup, creds):
    other.set_records("posts", POSTS)
    server.fault("posts", kind="redirect", to=other.url("posts"))
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="api-token")
    r = setup.syncd("--once", env=creds)
    assert r.returncode == 1
    assert f"refusing to request {other.url('posts')}: it is on another origin" in r.stderr
    assert other.requests() == []


def test_a_file_url_as_next_page_is_never_read(server, setup):
    server.set_records("posts", POSTS)
    server.options("posts", nextLink="file:///etc/passwd")
    setup.add_source("posts", server.url("posts"), Pagination="link")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert ("page 2: refusing to request file:///etc/passwd: it is a local file other than URL=; "
            "only the file URL= names is ever read") in r.stderr
    assert "root:" not in r.stderr
    assert not setup.cache_file("posts").exists()


def test_a_fifo_as_url_is_refused_at_once(setup, tmp_path):
    fifo = tmp_path / "posts.json"
    os.mkfifo(fifo)
    setup.add_source("posts", f"file://{fifo}", TimeoutSec="30s")
    r = setup.syncd("--once", timeout=20)                       # not left waiting for a writer (TimeoutSec=30s)
    assert r.returncode == 1
    assert f"posts: {fifo} is not a regular file; URL= must name a JSON file" in r.stderr


def test_a_listing_has_a_deadline_over_all_pages(server, setup):
    server.set_records("posts", [{"id": i} for i in range(1, 7)])
    server.options("posts", perPage=1, delay=0.4)
    setup.add_source("posts", server.url("posts"), Pagination="link", ListingTimeoutSec="1s", TimeoutSec="5s")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "posts: the listing took longer than ListingTimeoutSec=1.0 seconds after" in r.stderr
    assert not setup.cache_file("posts").exists()


def test_max_pages_bounds_a_listing(server, setup):
    server.set_records("posts", [{"id": i} for i in range(1, 7)])
    server.options("posts", perPage=1)
    setup.add_source("posts", server.url("posts"), Pagination="link", MaxPages="3")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "posts: the listing has more than MaxPages=3 pages; raise MaxPages= if that is right" in r.stderr
    assert len(server.requests("/posts")) == 3


def test_an_oversized_etag_is_not_kept_or_sent_back(server, setup):
    server.set_records("posts", POSTS)
    server.options("posts", etagBytes=9000)
    setup.add_source("posts", server.url("posts"))
    first = setup.syncd("--once")
    assert first.returncode == 0, first.stderr
    assert "posts: the server's ETag is longer than 8192 bytes; it is not stored, so refreshes are not conditional" in first.stderr
    second = setup.syncd("--once")
    assert second.returncode == 0, second.stderr
    assert [r["headers"].get("if-none-match") for r in server.requests("/posts")] == [None, None]
    assert setup.cache_doc("posts")["records"] == POSTS


def test_a_response_header_too_large_for_libcurl_says_so_not_out_of_memory(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    server.options("posts", etagBytes=200_000)               # one 200 KB header line
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert (f"posts: the response from {server.url('posts')} has a header larger than libcurl accepts (100 KiB for one "
            "header line): the server, or a proxy in front of it, sends an oversized header; have it fixed there") in r.stderr, r.stderr
    assert "Out of memory" not in r.stderr
    assert setup.cache_file("posts").read_bytes() == before
