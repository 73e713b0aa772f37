"""Bytes in, the same bytes out: numbers no double can hold reach the cache file, Get, List and the server as
written (docs/local-changes.md, "Records as written"); IDs that are canonically equivalent Unicode are two records; a gzip
body cut before its trailer is a truncated body (syncd(8) GUARANTEES 2)."""
import json
import socket
import subprocess
import unicodedata
from urllib.parse import quote

import pytest

from conftest import BIN, POSTS, assert_refused_keeping_the_copy, wait_for
from test_outbox import start, writable, writes
from test_syncctl import syncctl

# Numbers beyond Int64 and a double's precision and range, as the server writes them.
NUMBERS = (b'{"id":1,"big":18446744073709551616,"frac":0.123456789012345678,"tiny":1e-400,"neg":-0,'
           b'"exp":1.50E+3,"huge":1e400}')
HUGE = b'{"id":2,"v":1e400}'
NFC, NFD = "\u00e9", "e\u0301"
assert unicodedata.normalize("NFC", NFD) == NFC


def varlink(setup, method, **parameters):
    """One Varlink call on the control socket: the reply's raw bytes (without the NUL), as syncd sent them."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(str(setup.runtime / "io.syncd.Manager"))
        s.sendall(json.dumps({"method": "io.syncd.Manager." + method, "parameters": parameters}).encode() + b"\0")
        reply = b""
        while not reply.endswith(b"\0"):
            chunk = s.recv(65536)
            assert chunk, reply
            reply += chunk
    return reply[:-1]


def test_numbers_reach_the_cache_file_get_and_list_as_the_server_wrote_them(server, setup, daemons):
    server.set_raw("nums", b"[" + NUMBERS + b",\n " + HUGE + b"]")
    setup.add_source("nums", server.url("nums"))
    d = daemons(setup)
    d.wait_log("nums: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert NUMBERS in setup.cache_file("nums").read_bytes() and HUGE in setup.cache_file("nums").read_bytes()
    assert varlink(setup, "Get", source="nums", id="1") == b'{"parameters":{"record":' + NUMBERS + b"}}"
    assert varlink(setup, "Get", source="nums", id="2") == b'{"parameters":{"record":' + HUGE + b"}}"
    listed = varlink(setup, "List", source="nums", offset=0, limit=10)
    assert listed.startswith(b'{"parameters":{"records":[' + NUMBERS + b"," + HUGE + b'],"total":2,'), listed
    r = syncctl(setup, "get", "nums", "1", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().encode() == NUMBERS
    r = syncctl(setup, "list", "nums", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().encode() == b"[" + NUMBERS + b"," + HUGE + b"]"


def put_bytes(setup, record):
    """`syncctl put posts -` with `record` (bytes) on standard input, as a user would pipe a file."""
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                          input=record, capture_output=True, timeout=30)


def test_a_put_reaches_the_server_and_the_cache_file_with_its_numbers_as_written(server, setup, daemons):
    writable(setup, server, version=False)
    start(setup, daemons)
    server.fault("posts", kind="status", status=503)       # offline: the cache file shows the put before the push
    # (1e400 is in the Get test: this server stores what it receives with Python's json, which has no 1e400.)
    record = b'{"id":"n1","big":12345678901234567890,"frac":0.123456789012345678,"tiny":1e-400,"neg":-0,"exp":-2.50e-7}'
    r = put_bytes(setup, record)
    assert r.returncode == 0, r.stderr
    assert record in setup.cache_file("posts").read_bytes()
    assert syncctl(setup, "get", "posts", "n1", "--json").stdout.strip().encode() == record
    server.clear_fault("posts")
    server.clear_requests()
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert [q["body"].encode() for q in server.requests() if q["method"] == "POST"] == [record]


def test_canonically_equivalent_ids_are_two_records(server, setup, daemons):
    writable(setup, server, version=False, records=[{"id": NFC, "v": "nfc"}, {"id": NFD, "v": "nfd"}])
    start(setup, daemons)
    for ident, v in ((NFD, "nfd"), (NFC, "nfc")):
        r = syncctl(setup, "get", "posts", ident, "--json")
        assert r.returncode == 0 and json.loads(r.stdout) == {"id": ident, "v": v}, r.stderr
    server.fault("posts", kind="status", status=503)
    r = put_bytes(setup, json.dumps({"id": NFD, "v": "local"}).encode())
    assert r.returncode == 0, r.stderr
    records = setup.cache_doc("posts")["records"]       # Python's str == compares code points, never normalises
    assert records == [{"id": NFC, "v": "nfc"}, {"id": NFD, "v": "local"}]
    r = syncctl(setup, "delete", "posts", NFC)
    assert r.returncode == 0, r.stderr
    doc = setup.cache_doc("posts")
    assert doc["records"] == [{"id": NFD, "v": "local"}]
    assert sorted(doc["pending"]) == sorted([NFC, NFD])
    assert syncctl(setup, "get", "posts", NFC, "--json").returncode != 0
    assert json.loads(syncctl(setup, "get", "posts", NFD, "--json").stdout) == {"id": NFD, "v": "local"}
    server.clear_fault("posts")
    server.clear_requests()
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert writes(server) == [("PUT", "/posts/" + quote(NFD)), ("DELETE", "/posts/" + quote(NFC))]
    assert server.records("posts") == [{"id": NFD, "v": "local"}]
    assert setup.cache_doc("posts")["records"] == [{"id": NFD, "v": "local"}]


GZIP_FAULTS = [
    # name, fault, the reason syncd gives
    ("cut-before-trailer", dict(cut=8),
     "truncated body: the gzip-compressed response ended before its CRC-32 and length trailer"),
    ("wrong-crc", dict(badCRC=True), "the gzip-compressed body is damaged (incorrect data check)"),
    ("unasked-encoding", dict(encoding="br"), "the server answered with Content-Encoding: br, which syncd did not ask "
     "for (it asks for gzip only); configure the server to send gzip or no encoding"),
]


@pytest.mark.parametrize("name,fault,reason", GZIP_FAULTS, ids=[c[0] for c in GZIP_FAULTS])
def test_a_gzip_body_that_is_not_whole_keeps_the_cache(server, setup, name, fault, reason):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    server.fault("posts", kind="gzip")                   # whole: decoded and stored
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS
    assert server.requests("/posts")[-1]["headers"]["accept-encoding"] == "gzip"
    before = setup.cache_file("posts").read_bytes()
    server.set_records("posts", POSTS + [{"id": 3, "title": "new"}])
    server.fault("posts", kind="gzip", **fault)
    r = setup.syncd("--once")
    assert_refused_keeping_the_copy(r, setup, before, reason)


def test_a_gzip_body_over_max_bytes_once_decoded_keeps_the_cache(server, setup):
    # 20 KB on the wire, 1 MB decoded: MaxBytes= bounds what the body decodes to, not what it weighs compressed.
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), MaxBytes="64K")
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    server.set_records("posts", [{"id": n, "pad": "a" * 1000} for n in range(1000)])
    server.fault("posts", kind="gzip")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "larger than MaxBytes=65536" in r.stderr and "(kept 2 cached records)" in r.stderr, r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    assert setup.leftovers() == []
