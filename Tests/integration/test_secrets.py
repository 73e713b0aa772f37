"""Secrets stay secret (syncd(8), SECRETS; docs/control-api.md, "Secrets"): a token a server echoes, a password or an
API key in URL= reach no status, log line, STATUS= or syncctl output, and nothing of the server's reaches a caller
outside ControlGroup=; a server's escape sequences reach no terminal raw; a crashed syncd leaves no core dump.
Run against the release binaries too (Makefile, RELEASE_TESTS)."""
import base64
import json
import os
import re
import resource
import secrets
import signal
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from another_user import AnotherUser
from conftest import BIN, POSTS, ROOT, Setup, wait_for
from namespaced_systemd import host_unchanged  # noqa: F401 (a fixture)
from test_outbox import V1, V2, put, start, writable
from test_syncctl import shared, syncctl  # noqa: F401 (the fixture that lets "nobody" run syncctl)
from test_systemd import SOCKET, installed_root, systemd  # noqa: F401 (fixtures: the shipped unit under systemd)

TOKEN = "tok-" + secrets.token_hex(16) + "/+="


def forms(secret):
    """The secret as written, percent-encoded (with and without "/" kept) and base64-encoded (alone and after "Bearer "):
    none may show anywhere."""
    return [secret, quote(secret, safe=""), quote(secret), base64.b64encode(secret.encode()).decode().rstrip("="),
            base64.b64encode(f"Bearer {secret}".encode()).decode().rstrip("=")]


def status_json(setup, as_user=None):
    r = syncctl(setup, "status", "--json", as_user=as_user)
    assert r.returncode == 0, r.stderr
    return r.stdout


def source_of(text, name):
    return next(s for s in json.loads(text)["sources"] if s["name"] == name)


def with_token(tmp_path):
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "api-token").write_text(TOKEN + "\n")
    return {"CREDENTIALS_DIRECTORY": str(credentials)}


@pytest.mark.parametrize("fault, line", [
    ({"kind": "echo", "status": 500, "echo": "headers"}, "HTTP 500 from {url}"),
    ({"kind": "echo", "status": 401, "echo": "token"}, "HTTP 401 from {url}: check the credentials (BearerTokenCredential=)"),
    ({"kind": "echo", "status": 401, "echo": "token", "encoding": "percent"},
     "HTTP 401 from {url}: check the credentials (BearerTokenCredential=)"),
    ({"kind": "echo", "status": 401, "echo": "token", "encoding": "base64"},
     "HTTP 401 from {url}: check the credentials (BearerTokenCredential=)"),
    ({"kind": "echo", "status": 401, "echo": "token", "encoding": "quote"},
     "HTTP 401 from {url}: check the credentials (BearerTokenCredential=)"),
    ({"kind": "echo", "status": 401, "echo": "token", "encoding": "base64-header"},
     "HTTP 401 from {url}: check the credentials (BearerTokenCredential=)"),
], ids=["500-echoing-headers", "401-naming-the-token", "401-percent-encoded", "401-base64", "401-quoted-keeping-slash",
        "401-base64-of-bearer-token"])
def test_a_token_the_server_echoes_reaches_no_status_output_or_log(shared, setup, server, daemons, notify, tmp_path, fault, line):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="api-token")
    d = daemons(setup, notify=notify, env=with_token(tmp_path))
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.fault("posts", **fault)
    assert syncctl(setup, "refresh", "posts").returncode == 0
    wait_for(lambda: source_of(status_json(setup), "posts")["lastError"], what="the refresh to fail")
    # The server did get the token, and its answer does repeat it: the test is about something real.
    sent = server.requests("/posts")[0]["headers"]["authorization"]
    assert sent == f"Bearer {TOKEN}"
    echoed = subprocess.run(["curl", "-s", "-H", f"Authorization: {sent}", server.url("posts")], capture_output=True,
                            text=True, timeout=10).stdout
    assert any(form in echoed for form in forms(TOKEN)), echoed

    expected = line.format(url=server.url("posts"))
    root_view = status_json(setup)
    everyone_view = status_json(setup, as_user=shared)
    # Root sees the server's words with the token hidden; "nobody" only the status line and the kind of failure.
    assert source_of(root_view, "posts")["lastError"].startswith(expected + ": ")
    assert "[redacted]" in source_of(root_view, "posts")["lastError"]
    assert source_of(everyone_view, "posts")["lastError"] == expected
    refresh = syncctl(setup, "refresh", "posts", "--wait")
    assert refresh.returncode == 1 and "[redacted]" in refresh.stderr, refresh.stderr
    human = [syncctl(setup, "status").stdout, syncctl(setup, "status", as_user=shared).stdout]
    assert expected in human[1]
    d.stop()
    notify.drain()
    log = d.log_path.read_text()
    everything = [root_view, everyone_view, refresh.stdout, refresh.stderr, *human, log,
                  *(message for _, message in notify.messages)]
    for text in everything:
        for form in forms(TOKEN):
            assert form not in text, text
    # The daemon's log says what failed, with the server's words redacted; the cached copy stayed.
    assert expected in log and "[redacted]" in log
    assert setup.cache_doc("posts")["records"] == POSTS


def test_a_url_password_and_an_api_key_reach_nothing_nobody_can_read_nor_the_log(shared, setup, server, daemons, notify):
    password, key = "PASSW0RD-" + secrets.token_hex(6), "K3Y-" + secrets.token_hex(8)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=500, body=f"unknown api_key {key} for /posts?api_key={key}")
    setup.add_source("deploy", f"http://deploy:{password}@127.0.0.1:{server.port}/posts")
    setup.add_source("keyed", server.url("posts") + f"?api_key={key}&page=1")
    check = setup.syncd("--check-config")
    assert check.returncode == 1
    assert "credentials (\"user:password@\") are not allowed" in check.stderr and "http://[redacted]@127.0.0.1" in check.stderr
    (setup.config / "sources.d" / "deploy.source").rename(setup.dir / "deploy.source")
    verbose = setup.syncd("--check-config", "--verbose")
    assert verbose.returncode == 0 and f"keyed: listing: GET {server.url('posts')}?api_key=[redacted]&page=1" in verbose.stdout
    (setup.dir / "deploy.source").rename(setup.config / "sources.d" / "deploy.source")
    d = daemons(setup, notify=notify)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    wait_for(lambda: source_of(status_json(setup), "keyed")["lastError"], what="the keyed source to fail")
    # The key did go to the server (it is how the server knows the caller).
    assert server.requests("/posts")[0]["path"] == f"/posts?api_key={key}&page=1"

    everyone = status_json(setup, as_user=shared)
    keyed = source_of(everyone, "keyed")
    assert keyed["url"] == server.url("posts") + "?api_key=[redacted]&page=[redacted]"
    assert keyed["lastError"] == f"HTTP 500 from {server.url('posts')}?api_key=[redacted]&page=[redacted]"
    failed = json.loads(everyone)["failed"]
    assert [f["name"] for f in failed] == ["deploy"]
    assert "invalid URL \"http://[redacted]@127.0.0.1" in failed[0]["problem"]
    root = status_json(setup)
    assert source_of(root, "keyed")["url"] == server.url("posts") + "?api_key=[redacted]&page=1"
    assert source_of(root, "keyed")["lastError"].startswith(f"HTTP 500 from {server.url('posts')}?api_key=[redacted]&page=1: ")
    human = syncctl(setup, "status", as_user=shared)
    assert human.returncode == 0 and "api_key=[redacted]" in human.stdout
    d.stop()
    notify.drain()
    log = d.log_path.read_text()
    for text in [everyone, root, human.stdout, check.stderr, verbose.stdout, log, *(message for _, message in notify.messages)]:
        assert password not in text and key not in text, text
    assert "deploy" in log and "api_key=[redacted]" in log


def test_a_redirect_to_a_url_holding_the_token_reaches_nobody_and_root_only_redacted(shared, setup, server, daemons, notify,
                                                                                     tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="api-token")
    d = daemons(setup, notify=notify, env=with_token(tmp_path))
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    server.fault("posts", kind="echo", echo="redirect", to="http://127.0.0.1:1/evil/")
    refresh = syncctl(setup, "refresh", "posts", "--wait")
    assert refresh.returncode == 1
    # The server did send the token in its Location (percent-encoded as Python's quote does, "/" kept).
    location = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", "-H", f"Authorization: Bearer {TOKEN}",
                               server.url("posts")], capture_output=True, text=True, timeout=10).stdout
    assert location == "http://127.0.0.1:1/evil/" + quote(TOKEN), location
    root_view = status_json(setup)
    everyone_view = status_json(setup, as_user=shared)
    # Root sees where the redirect led, the token in it hidden; nobody only that a URL was refused.
    assert source_of(root_view, "posts")["lastError"] == (
        "refusing to request http://127.0.0.1:1/evil/[redacted]: it is on another origin (http://127.0.0.1:1) than URL= "
        f"(http://127.0.0.1:{server.port}); add http://127.0.0.1:1 to AllowedOrigins= if the server really pages or redirects there")
    public = ("refusing to request a URL outside what the source allows (URL= and AllowedOrigins=): a redirect's target or a "
              "link the server gave, which privileged callers see")
    assert source_of(everyone_view, "posts")["lastError"] == public
    human = syncctl(setup, "status", as_user=shared)
    assert public in human.stdout and "evil" not in human.stdout and "evil" not in everyone_view
    d.stop()
    notify.drain()
    log = d.log_path.read_text()
    statuses = [message for _, message in notify.messages]
    assert "evil" not in "".join(statuses)
    for text in [root_view, everyone_view, human.stdout, refresh.stderr, log, *statuses]:
        for form in forms(TOKEN):
            assert form not in text, text
    assert "/evil/[redacted]" in log and "/evil/[redacted]" in refresh.stderr
    assert setup.cache_doc("posts")["records"] == POSTS


def test_an_error_after_a_redirect_names_only_the_origin_to_nobody(shared, setup, server, daemons, tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="api-token")
    d = daemons(setup, env=with_token(tmp_path))
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    # A redirect on the same origin, to a path holding the token, which answers 404.
    server.fault("posts", kind="echo", echo="redirect", to=server.url("missing") + "/")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 1
    root = source_of(status_json(setup), "posts")["lastError"]
    everyone_view = status_json(setup, as_user=shared)
    everyone = source_of(everyone_view, "posts")["lastError"]
    assert root.startswith(f"HTTP 404 from {server.url('missing')}/[redacted]: check URL="), root
    assert everyone == (f"HTTP 404 from http://127.0.0.1:{server.port} (a URL the server redirected or linked to): check URL="), everyone
    d.stop()
    for text in [root, everyone_view, d.log_path.read_text()]:
        for form in forms(TOKEN):
            assert form not in text, text
    assert "missing" not in everyone_view
    assert setup.cache_doc("posts")["records"] == POSTS


def test_each_cookie_value_is_a_secret_of_its_own(setup, server, daemons):
    cookie = "CookieVal" + secrets.token_hex(5)
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=401, body=f"invalid session {cookie}")
    setup.add_source("posts", server.url("posts"), Header=f"Cookie: theme=dark; sid={cookie}")
    d = daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    refresh = syncctl(setup, "refresh", "posts", "--wait")
    assert refresh.returncode == 1 and "invalid session [redacted]" in refresh.stderr, refresh.stderr
    # The cookie did go to the server.
    assert server.requests("/posts")[-1]["headers"]["cookie"] == f"theme=dark; sid={cookie}"
    root = status_json(setup)
    assert source_of(root, "posts")["lastError"].endswith(": invalid session [redacted]")
    d.stop()
    for text in [root, refresh.stderr, d.log_path.read_text()]:
        assert cookie not in text, text


def test_matrix_parameters_fragments_and_pass_are_hidden(shared, setup, server, daemons):
    matrix, password, fragment = ("Matrix" + secrets.token_hex(5), "Pass" + secrets.token_hex(5), "Frag" + secrets.token_hex(5))
    server.set_records("posts", POSTS)
    url = server.url("posts") + f";api_key={matrix};v=2?pass={password}&page=1#access_token={fragment}"
    setup.add_source("posts", url)
    d = daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    wait_for(lambda: source_of(status_json(setup), "posts")["lastError"], what="the refresh to fail")
    # The matrix parameter and the query did go to the server (the fragment never does).
    assert server.requests()[0]["path"] == f"/posts;api_key={matrix};v=2?pass={password}&page=1"
    everyone = status_json(setup, as_user=shared)
    root = status_json(setup)
    hidden = server.url("posts") + ";api_key=[redacted];v=[redacted]?pass=[redacted]&page=[redacted]#[redacted]"
    assert source_of(everyone, "posts")["url"] == hidden
    assert source_of(root, "posts")["url"] == (server.url("posts") + ";api_key=[redacted];v=2?pass=[redacted]&page=1"
                                               "#access_token=[redacted]")
    human = syncctl(setup, "status", as_user=shared)
    d.stop()
    for text in [everyone, root, human.stdout, d.log_path.read_text()]:
        assert matrix not in text and password not in text and fragment not in text, text


MISTYPED = {
    # The reviewer's values: a missing colon, one slash, a password with "/" (read as a port), a space.
    "b2": "[Source]\nURL=https//deploy:PwSecret222@example.com/posts\n",
    "b3": "[Source]\nURL=https:/deploy:PwSecret333@example.com/posts\n",
    "b4": "[Source]\nURL=https://deploy:Pw/Secret444@example.com/posts\n",
    "b5": "[Source]\nURL=https://deploy:Pw Secret121@example.com/posts\n",
    "h1": "[Source]\nURL=https://example.com/posts\nHeader=X-Api-Key HdrSecret555\n",
    "h2": "[Source]\nURL=https://example.com/posts\nHeader X-Api-Key: HdrSecret666\n",
}
MISTYPED_SECRETS = ["PwSecret222", "PwSecret333", "Secret444", "Secret121", "HdrSecret555", "HdrSecret666", "PwSecretR1"]


def test_mistyped_urls_and_headers_quote_no_secret(shared, setup, server, daemons, notify):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup, notify=notify)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    for name, text in MISTYPED.items():
        (setup.config / "sources.d" / f"{name}.source").write_text(text)
    assert syncctl(setup, "reload").returncode == 0
    everyone = status_json(setup, as_user=shared)
    problems = {f["name"]: f["problem"] for f in json.loads(everyone)["failed"]}
    where = f"{setup.config}/sources.d"
    # Each still says what is wrong, and where.
    assert problems == {
        "b2": f"{where}/b2.source:2: URL: invalid URL \"https//[redacted]@example.com/posts\": missing scheme; write it in full, "
              "e.g. http://example.com/items",
        "b3": f"{where}/b3.source:2: URL: invalid URL \"https:/[redacted]@example.com/posts\": missing host; write https://HOST/PATH",
        "b4": f"{where}/b4.source:2: URL: invalid URL \"https://[redacted]@example.com/posts\": invalid port; use a number from 1 to "
              "65535 (the \"@\" later in the URL suggests user information: credentials (\"user:password@\") are not allowed in "
              "URLs; put a token in a credential and set BearerTokenCredential=)",
        "b5": f"{where}/b5.source:2: URL: invalid URL \"https://[redacted]@example.com/posts\": contains a space or control "
              "character; percent-encode it (a space is %20)",
        "h1": f"{where}/h1.source:3: Header: invalid header \"X-Api-Key …\": expected \"Name: value\" with a \":\" after the "
              "name, e.g. \"Accept: application/json\"",
        "h2": f"{where}/h2.source:3: expected \"Key=Value\", a [Section] header or a comment, not a line starting \"Header\"",
    }
    human = syncctl(setup, "status", as_user=shared)
    assert human.returncode == 0 and "invalid URL \"https//[redacted]@example.com/posts\"" in human.stdout

    # A mistyped ReachabilityURL= in syncd.conf: the reload is rejected whole, with the reason, without the password.
    good_main = (setup.config / "syncd.conf").read_text()
    (setup.config / "syncd.conf").write_text(good_main + "[Network]\nReachabilityURL=https:/probe:PwSecretR1@example.com/\n")
    rejected = syncctl(setup, "reload")
    assert rejected.returncode == 1
    line = f"{setup.config}/syncd.conf:7: ReachabilityURL: invalid URL \"https:/[redacted]@example.com/\": missing host; write https://HOST/PATH"
    assert line in rejected.stderr
    everyone_rejected = status_json(setup, as_user=shared)
    assert json.loads(everyone_rejected)["daemon"]["reloadRejected"] == line
    human_rejected = syncctl(setup, "status", as_user=shared)
    notify.wait_for("Reload failed")
    check = setup.syncd("--check-config")
    assert check.returncode == 1 and "https:/[redacted]@example.com/" in check.stderr
    # The good source kept running, its data untouched.
    assert [s["name"] for s in json.loads(everyone_rejected)["sources"]] == ["posts"]
    assert setup.cache_doc("posts")["records"] == POSTS
    d.stop()
    notify.drain()
    log = d.log_path.read_text()
    assert "https//[redacted]@example.com/posts" in log and line in log
    for text in [everyone, human.stdout, rejected.stderr, everyone_rejected, human_rejected.stdout, check.stderr, log,
                 *(message for _, message in notify.messages)]:
        for secret in MISTYPED_SECRETS:
            assert secret not in text, (secret, text)


def test_a_token_pasted_as_the_credential_name_reaches_no_caller_outside_control_group(shared, setup, server, daemons, notify, tmp_path):
    pasted = "ghp_PastedTokenAAAA1234"
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), BearerTokenCredential=pasted)
    d = daemons(setup, notify=notify, env=with_token(tmp_path))
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    wait_for(lambda: source_of(status_json(setup), "posts")["lastError"], what="the refresh to fail")
    public = ("Failed to read the source's credential (BearerTokenCredential=): systemd did not pass it when syncd started; "
              "privileged callers (syncctl status as root) see which and what to do")
    everyone = status_json(setup, as_user=shared)
    assert source_of(everyone, "posts")["lastError"] == public
    human = syncctl(setup, "status", as_user=shared)
    assert public in human.stdout
    # Root configured the name: root's status and the log keep it, with what to do.
    root = source_of(status_json(setup), "posts")["lastError"]
    assert root.startswith(f"Failed to read credential {pasted} from {tmp_path / 'credentials'}: No such file or directory")
    assert "systemctl restart syncd" in root
    d.stop()
    notify.drain()
    assert pasted in d.log_path.read_text()
    for text in [everyone, human.stdout, *(message for _, message in notify.messages)]:
        assert pasted not in text, text
    # Nothing was fetched without the token, nothing cached.
    assert server.requests("/posts") == [] and not setup.cache_file("posts").exists()


def test_escape_sequences_from_a_server_are_printed_escaped(setup, server, daemons):
    # C0 (ESC, BEL) and C1 controls: U+009B is CSI to a terminal, U+009D OSC, U+009C ST (bytes C2 9B, C2 9D, C2 9C).
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=500, body="\x1b]2;pwned\x07\x1b[2J boom \x9b2J \x9d0;x\x9c")
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    wait_for(lambda: source_of(status_json(setup), "posts")["lastError"], what="the refresh to fail")
    shown = "\\x1b]2;pwned\\x07\\x1b[2J boom \\xc2\\x9b2J \\xc2\\x9d0;x\\xc2\\x9c"
    outputs = {"status": syncctl(setup, "status").stdout, "status posts": syncctl(setup, "status", "posts").stdout}
    refresh = syncctl(setup, "refresh", "posts", "--wait")
    assert refresh.returncode == 1
    outputs["refresh --wait"] = refresh.stderr
    for what, text in outputs.items():
        assert shown in text, (what, text)
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text), (what, text)
    # JSON stays JSON: the characters are there, C0 in JSON's own escapes, C1 as JSON leaves them.
    raw = status_json(setup)
    assert "\x1b" not in raw and source_of(raw, "posts")["lastError"].endswith(": \x1b]2;pwned\x07\x1b[2J boom \x9b2J \x9d0;x\x9c")
    # The log escapes them as syncctl does.
    d.wait_log(shown)

    # Record IDs and members with escape sequences and a line break: list, get and the cache file.
    server.clear_fault("posts")
    records = [{"id": "a\x1b[2Jb", "title": "x"}, {"id": 2, "title": "y"}, {"id": "c\nFAKE LINE", "title": "z"},
               {"id": "c\x9b2J", "title": "\x9b2J \x9d0;x\x9c"}]
    server.set_records("posts", records)
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    listed = syncctl(setup, "list", "posts")
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert len(lines) == 1 + len(records) + 2                   # header, one line per record, blank, count
    assert lines[1].startswith("a\\x1b[2Jb  ")
    assert lines[3].startswith("c\\x0aFAKE LINE  ") and not any(l.startswith("FAKE LINE") for l in lines)
    assert lines[4].startswith("c\\xc2\\x9b2J") and "\\u009B2J \\u009D0;x\\u009C" in lines[4]
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", listed.stdout), listed.stdout
    assert json.loads(syncctl(setup, "list", "posts", "--json").stdout) == records
    got = syncctl(setup, "get", "posts", "c\x9b2J")
    assert got.returncode == 0 and not re.search("[\x7f-\x9f]", got.stdout), got.stdout
    assert "\\u009B2J" in got.stdout and json.loads(got.stdout) == records[3]      # the same JSON value
    # --json is for programs: as JSON writes it, the C1 characters raw.
    assert syncctl(setup, "get", "posts", "c\x9b2J", "--json").stdout == json.dumps(records[3], ensure_ascii=False,
                                                                                       separators=(",", ":")) + "\n"
    missing = syncctl(setup, "get", "posts", "x\x9b2J\nFAKE")
    assert missing.returncode == 1 and "\\xc2\\x9b2J\\x0aFAKE" in missing.stderr, missing.stderr
    assert len(missing.stderr.splitlines()) == 1
    # The cache file keeps the server's values as they were: nothing escaped there.
    assert setup.cache_doc("posts")["records"] == records
    assert b"\\x" not in setup.cache_file("posts").read_bytes()


def test_escape_sequences_in_a_conflicting_record_are_printed_escaped(setup, server, daemons):
    writable(setup, server, policy="manual")
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)
    assert put(setup, {"id": 1, "title": "local \x9b2J", "version": V1}).returncode == 0
    server.set_records("posts", [{"id": 1, "title": "server \x9d0;x\x9c", "version": V2}, dict(POSTS[1], version=V1)])
    server.clear_fault("posts")
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    side_by_side = syncctl(setup, "conflicts")
    assert side_by_side.returncode == 0
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", side_by_side.stdout), side_by_side.stdout
    title_row = next(l for l in side_by_side.stdout.splitlines() if "title" in l)
    assert '"local \\u009B2J"' in title_row and '"server \\u009D0;x\\u009C"' in title_row
    conflicts = json.loads(syncctl(setup, "conflicts", "--json").stdout)
    assert conflicts[0]["local"]["title"] == "local \x9b2J" and conflicts[0]["remote"]["title"] == "server \x9d0;x\x9c"


def test_a_warning_quoting_the_server_is_redacted_and_names_no_value_for_nobody(shared, setup, server, daemons, tmp_path):
    # The duplicate ClientIDField= warning quotes a record member: here one that carries the token.
    value = "c-" + TOKEN + "\x9b2J"
    records = [{"id": "1", "cid": value}, {"id": "2", "cid": value}]
    server.set_records("dup", records)
    setup.add_source("dup", server.url("dup"), BearerTokenCredential="api-token", Writable="yes", ClientIDField="cid")
    d = daemons(setup, env=with_token(tmp_path))
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert syncctl(setup, "refresh", "dup", "--wait").returncode == 0
    privileged = ('the server took one create more than once: 2 records carry cid="c-[redacted]\x9b2J" (1, 2); '
                  "syncd keeps every record the server lists: remove the extra ones on the server")
    public = ("the server took one create more than once: 2 records carry one cid= value; "
              "syncd keeps every record the server lists: remove the extra ones on the server "
              "(root and members of ControlGroup= see which records)")
    root_view = status_json(setup)
    everyone_view = status_json(setup, as_user=shared)
    assert source_of(root_view, "dup")["warnings"] == [privileged]
    assert source_of(everyone_view, "dup")["warnings"] == [public]
    human = {"root": syncctl(setup, "status", "dup").stdout, "nobody": syncctl(setup, "status", "dup", as_user=shared).stdout}
    assert privileged.replace("\x9b", "\\xc2\\x9b") in human["root"]
    assert public in human["nobody"] and '"1"' not in human["nobody"] and "(1, 2)" not in human["nobody"]
    d.stop()
    log = d.log_path.read_text()
    assert "dup: " + privileged.replace("\x9b", "\\xc2\\x9b") in log
    for text in [root_view, everyone_view, *human.values(), log]:
        for form in forms(TOKEN):
            assert form not in text, text
    assert setup.cache_doc("dup")["records"] == records                # nothing dropped, the values as served


def test_the_shipped_units_allow_no_core_dumps():
    for unit in ("syncd.service", "syncd.user.service"):
        lines = (ROOT / "packaging" / "systemd" / unit).read_text().splitlines()
        assert "LimitCORE=0" in lines, unit


@pytest.fixture
def nobody_folder(another_user):
    """The another_user fixture's folder (mode 0755), to hold syncd's configuration, state, cache and runtime folders,
    so that syncd can run as "nobody" whatever folder the checkout lies in."""
    (another_user.folder / "work").mkdir()
    return another_user


def run_as_nobody(runner, command, cwd):
    """Starts `command` as nobody (uid and gid 65534, through setpriv: no PAM session to reset the limit) with an
    unlimited core size (ulimit -c unlimited), in `cwd`."""
    def unlimited_cores():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    # A debug build's Swift runtime would catch the signal to print a backtrace (and wait there when the signal was
    # sent, not met); the release build has no backtracer. Turned off, both die of the signal as the kernel decides.
    env = dict(os.environ, SWIFT_BACKTRACE="enable=no")
    return runner.popen(command, uid=65534, cwd=cwd, env=env, preexec_fn=unlimited_cores,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cores(folder):
    return sorted(p.name for p in Path(folder).iterdir() if p.name.startswith("core"))


@pytest.mark.parametrize("crash", [signal.SIGSEGV, signal.SIGABRT], ids=["SIGSEGV", "SIGABRT"])
def test_a_crashed_syncd_leaves_no_core_dump(nobody_folder, server, crash):
    runner, nobody_folder = nobody_folder, nobody_folder.folder
    # This kernel writes plain core files into the crashing process's working folder; a syncd crash must not.
    assert Path("/proc/sys/kernel/core_pattern").read_text().strip() == "core", "the test needs core_pattern=core"
    setup = Setup(nobody_folder / "instance")
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    subprocess.run(["chown", "-R", "nobody:nogroup", str(nobody_folder)], check=True)
    work = nobody_folder / "work"
    # The same crash of a dumpable program, run the same way, does leave a core: the check below means something.
    control = run_as_nobody(runner, ["sleep", "60"], work)
    wait_for(lambda: Path(f"/proc/{control.pid}/status").read_text().count("\nUid:\t65534") == 1, what="sleep as nobody")
    control.send_signal(crash)
    assert control.wait(10) == -crash
    wait_for(lambda: cores(work), what="the control's core file")
    for name in cores(work):
        (work / name).unlink()

    daemon = run_as_nobody(runner, [BIN / "syncd", "--config-dir", setup.config], work)
    try:
        wait_for(lambda: setup.cache_file("posts").exists(), timeout=30, what="syncd as nobody to sync")
        # Non-dumpable: its /proc files belong to root although it runs as nobody, and nobody cannot read them.
        assert os.stat(f"/proc/{daemon.pid}/environ").st_uid == 0
        peek = runner.run(["/usr/bin/cat", f"/proc/{daemon.pid}/environ"], uid=65534, capture_output=True, timeout=10)
        assert peek.returncode != 0 and b"Permission denied" in peek.stderr
        limits = Path(f"/proc/{daemon.pid}/limits").read_text()
        assert any(line.startswith("Max core file size") and "unlimited" in line for line in limits.splitlines()), limits
        daemon.send_signal(crash)
        assert daemon.wait(10) == -crash
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert cores(work) == [] and cores(nobody_folder) == []
    assert setup.cache_doc("posts")["records"] == POSTS


def test_under_the_shipped_unit_syncd_is_not_dumpable_and_its_control_socket_still_tells_callers_apart(server, systemd):
    """prctl(PR_SET_DUMPABLE, 0) with the unit's hardening (ProtectProc=invisible, ProcSubset=pid, the system call
    filter): syncd starts, serves, reads its own /proc/self (the idle memory policy), and the control socket's peer
    credentials still tell root from nobody."""
    sd = systemd
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=500, body="the server's own words")
    sd.run("systemd-sysusers")
    sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
    sd.run("systemctl", "daemon-reload")
    sd.run("systemctl", "start", "syncd")
    state = sd.show("syncd", "ActiveState", "MainPID", "LimitCORE")
    assert state["ActiveState"] == "active" and state["LimitCORE"] == "0", state
    pid = int(state["MainPID"])
    uid = sd.run("getent", "passwd", "syncd").stdout.split(":")[2]
    assert sd.run("stat", "-c", "%u", f"/proc/{pid}/environ").stdout.split() == ["0"]
    assert re.search(r"^Uid:\s+" + uid + r"\s", sd.run("cat", f"/proc/{pid}/status").stdout, re.MULTILINE)
    assert re.search(r"^Max core file size\s+0\s+0\s", sd.run("cat", f"/proc/{pid}/limits").stdout, re.MULTILINE)
    wait_for(lambda: "the server's own words" in sd.run("/usr/bin/syncctl", "--socket", SOCKET, "status").stdout,
             timeout=30, what="the failure in root's status")
    # nobody is not privileged: the same status without the server's words.
    everyone = sd.run(*AnotherUser.system_command(["/usr/bin/syncctl", "--socket", SOCKET, "status", "--json"], "nobody")).stdout
    assert json.loads(everyone)["sources"][0]["lastError"] == f"HTTP 500 from {server.url('posts')}"
    assert "the server's own words" not in everyone
    sd.run("systemctl", "stop", "syncd")
    stopped = sd.show("syncd", "ActiveState", "Result")
    assert (stopped["ActiveState"], stopped["Result"]) == ("inactive", "success"), stopped
