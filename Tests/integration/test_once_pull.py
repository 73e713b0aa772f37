"""syncd --once against real servers: the happy paths of syncd(8) GUARANTEES 2–4 and the cache format."""
import json
import os
import stat
import time

from conftest import POSTS


def test_first_sync_writes_the_spec_envelope(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    doc = setup.cache_doc("posts")
    assert list(doc) == ["schemaVersion", "source", "accountID", "savedAt", "etag", "records", "pending", "parked", "conflicts"]
    assert doc["schemaVersion"] == 1
    assert doc["source"] == "posts"
    assert doc["accountID"] == "default"
    assert doc["records"] == POSTS
    assert doc["pending"] == [] and doc["conflicts"] == []
    assert doc["etag"].startswith('"')
    assert doc["savedAt"].endswith("Z") and len(doc["savedAt"]) == 20
    mode = stat.S_IMODE(setup.cache_file("posts").stat().st_mode)
    assert mode == 0o640
    assert stat.S_IMODE((setup.cache / "default").stat().st_mode) == 0o750
    assert stat.S_IMODE((setup.state / "default").stat().st_mode) == 0o700
    assert setup.leftovers() == []


def test_request_carries_user_agent_accept_and_extra_headers(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), Header=["X-Api-Version: 2", "X-Client: test"])
    assert setup.syncd("--once").returncode == 0
    headers = server.requests("/posts")[0]["headers"]
    assert headers["user-agent"] == "syncd/1.0.0"
    assert headers["x-api-version"] == "2"
    assert headers["x-client"] == "test"
    assert "gzip" in headers.get("accept-encoding", "")


def test_reconcile_updates_inserts_removes_and_keeps_server_order(server, setup):
    server.set_records("posts", POSTS + [{"id": 3, "title": "Post 3", "author": "X"}])
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    new = [{"id": 4, "title": "Post 4", "author": "Y"},
           {"id": 2, "title": "Post 2 (edited)", "author": "Jane Doe"},
           {"id": 1, "title": "Post 1", "author": "Johnny Appleseed"}]
    server.set_records("posts", new)
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == new


def test_identical_content_only_moves_mtime(server, setup):
    server.set_records("posts", POSTS)
    server.options("posts", noValidators=True)
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    path = setup.cache_file("posts")
    before = path.read_bytes()
    inode = path.stat().st_ino
    old = time.time() - 3600
    os.utime(path, (old, old))
    assert setup.syncd("--once").returncode == 0
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode, "file was rewritten"
    assert path.stat().st_mtime > old + 3000


def test_nginx_static_collection_second_run_is_a_304(nginx, setup):
    (nginx.root / "posts.json").write_text(json.dumps(POSTS))
    setup.add_source("posts", nginx.url("posts.json"))
    assert setup.syncd("--once").returncode == 0
    path = setup.cache_file("posts")
    before = path.read_bytes()
    doc = json.loads(before)
    assert doc["records"] == POSTS
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert nginx.statuses(2) == [200, 304]
    assert path.read_bytes() == before


def test_nginx_gzip_body_is_decoded(nginx, setup):
    records = [{"id": i, "title": f"Post {i}", "body": "x" * 200} for i in range(500)]
    (nginx.root / "big.json").write_text(json.dumps(records))
    setup.add_source("big", nginx.url("big.json"))
    assert setup.syncd("--once").returncode == 0
    assert setup.cache_doc("big")["records"] == records


def test_link_pagination_relative_and_absolute(server, setup):
    records = [{"id": i, "title": f"P{i}"} for i in range(1, 8)]
    for name, relative in (("rel", True), ("abs", False)):
        server.set_records(name, records)
        server.options(name, perPage=3, relativeLinks=relative)
        setup.add_source(name, server.url(name), Pagination="link")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("rel")["records"] == records
    assert setup.cache_doc("abs")["records"] == records
    assert [q["path"] for q in server.requests("/rel")] == ["/rel", "/rel?page=2", "/rel?page=3"]


def test_records_path_into_a_wrapper(server, setup):
    server.set_records("wrapped", POSTS)
    server.options("wrapped", wrapper="data")
    setup.add_source("wrapped", server.url("wrapped"), RecordsPath="/data")
    assert setup.syncd("--once").returncode == 0
    assert setup.cache_doc("wrapped")["records"] == POSTS


def test_file_url_source(tmp_path, setup):
    src = tmp_path / "posts-file.json"
    src.write_text(json.dumps(POSTS))
    setup.add_source("local", f"file://{src}")
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("local")["records"] == POSTS


def test_string_ids_and_version_field(server, setup):
    records = [{"id": "a", "v": 1}, {"id": "b", "v": 2}]
    server.set_records("s", records)
    setup.add_source("s", server.url("s"), VersionField="v")
    assert setup.syncd("--once").returncode == 0
    assert setup.cache_doc("s")["records"] == records


def test_bearer_token_from_credentials_directory(server, setup, tmp_path):
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "api-token").write_text("s3cr3t-token\n")
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="api-token")
    r = setup.syncd("--once", env={"CREDENTIALS_DIRECTORY": str(creds)})
    assert r.returncode == 0, r.stderr
    assert server.requests("/posts")[0]["headers"]["authorization"] == "Bearer s3cr3t-token"
    assert "s3cr3t" not in r.stderr
    assert b"s3cr3t" not in setup.cache_file("posts").read_bytes()


def test_missing_credential_is_a_clear_error(server, setup, tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="api-token")
    r = setup.syncd("--once", env={"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert r.returncode == 1
    assert "posts: Failed to read credential api-token" in r.stderr
    assert "No such file or directory" in r.stderr
    assert server.requests("/posts") == []
    r = setup.syncd("--once", env={"CREDENTIALS_DIRECTORY": ""})
    assert r.returncode == 1
    assert "$CREDENTIALS_DIRECTORY is not set" in r.stderr


def test_token_never_sent_over_plain_http_to_a_remote_host(setup, tmp_path):
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "tok").write_text("abc")
    # 192.0.2.0/24 is TEST-NET-1: never contacted, the refusal happens before any connection.
    setup.add_source("remote", "http://192.0.2.1/posts", BearerTokenCredential="tok")
    r = setup.syncd("--once", env={"CREDENTIALS_DIRECTORY": str(creds)})
    assert r.returncode == 1
    assert "remote.source:3: BearerTokenCredential= with a plain http URL to 192.0.2.1 would send the token unencrypted; use https" in r.stderr
    assert not setup.cache_file("remote").exists()


def test_two_sources_one_failing_reports_only_that_one(server, setup):
    server.set_records("good", POSTS)
    setup.add_source("good", server.url("good"))
    setup.add_source("gone", server.url("gone"))
    r = setup.syncd("--once")
    assert r.returncode == 1
    failures = [l for l in r.stderr.splitlines() if l.endswith("cached records)")]
    assert len(failures) == 1 and failures[0].startswith("gone: HTTP 404")
    assert setup.cache_doc("good")["records"] == POSTS
