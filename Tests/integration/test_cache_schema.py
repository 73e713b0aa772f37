"""The cache file format apps rely on (syncd.cache(5)): the shipped JSON Schema describes what syncd writes,
refuses what apps must not be given, and the manual page's example reads a real daemon's file as printed."""
import json
import os
import re
import subprocess

import jsonschema
import pytest

from conftest import BIN, CACHE_SCHEMA, POSTS, ROOT, check_cache_file_schema, wait_for

PAGE = ROOT / "docs" / "syncd.cache.5.md"


def validator():
    schema = json.loads(CACHE_SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def syncctl(setup, *args, stdin=None):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), *args],
                          input=stdin, capture_output=True, text=True, timeout=30)


def example(pattern):
    """The one line of the manual page's EXAMPLES that matches `pattern`, as printed."""
    examples = PAGE.read_text().split("# EXAMPLES", 1)[1].split("\n# ", 1)[0]
    lines = [line for line in examples.splitlines() if re.search(pattern, line)]
    assert len(lines) == 1, lines
    return lines[0]


def test_a_file_with_pending_local_changes_follows_the_schema_and_the_manual_example_reads_it(server, setup, daemons):
    server.set_records("posts", POSTS)
    # Creates are refused for now (503: retried later), so the new record stays pending in the file.
    server.fault("posts", kind="status", status=503, method="POST")
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    put = syncctl(setup, "put", "posts", "-", stdin=json.dumps({"id": "local-1", "title": "Queued offline"}))
    assert put.returncode == 0, put.stderr
    doc = wait_for(lambda: (lambda doc: doc if doc["pending"] else None)(setup.cache_doc("posts")),
                   what="the put in the cache file")
    assert doc["pending"] == ["local-1"] and doc["records"][-1] == {"id": "local-1", "title": "Queued offline"}
    check_cache_file_schema(setup.cache_file("posts"), validator())

    # The page's jq recipe, run as printed: syncctl finds the daemon through $SYNCD_SOCKET.
    env = dict(os.environ, SYNCD_SOCKET=str(setup.runtime / "io.syncd.Manager"),
               PATH=f"{BIN}:{os.environ['PATH']}")
    r = subprocess.run(["sh", "-c", example(r"^jq ")], capture_output=True, text=True, env=env, timeout=30)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines() == [p["title"] for p in POSTS] + ["Queued offline"]


GOOD = {"schemaVersion": 1, "source": "posts", "accountID": "default", "savedAt": "2026-11-29T10:00:00Z",
        "etag": None, "records": [{"id": 1}, {"id": "b"}], "pending": ["b"], "parked": [], "conflicts": [1]}


@pytest.mark.parametrize("change, where", [
    ({"schemaVersion": 2}, "schemaVersion"),
    ({"records": {"id": 1}}, "records"),
    ({"records": [{"id": 1}, [2]]}, "records/1"),
    ({"pending": ["b", "b"]}, "pending"),
    ({"pending": [1.5]}, "pending/0"),
    ({"savedAt": "29 Nov 2026"}, "savedAt"),
    ({"source": "../etc"}, "source"),
    ({"accountID": ""}, "accountID"),
])
def test_the_schema_refuses_a_document_apps_must_not_be_given(change, where):
    check = validator()
    assert list(check.iter_errors(GOOD)) == []
    errors = list(check.iter_errors(dict(GOOD, **change)))
    assert ["/".join(map(str, e.path)) for e in errors] == [where]


@pytest.mark.parametrize("member", ["records", "pending", "parked", "conflicts", "savedAt", "etag"])
def test_the_schema_requires_every_member_syncd_writes(member):
    document = {k: v for k, v in GOOD.items() if k != member}
    assert [e.validator for e in validator().iter_errors(document)] == ["required"]


def test_a_member_added_later_keeps_schema_version_1():
    """syncd.cache(5) COMPATIBILITY: additive members keep the version, so the schema must allow them."""
    assert list(validator().iter_errors(dict(GOOD, seq=42))) == []


EXAMPLES = ROOT / "docs" / "examples"


def test_the_inotify_example_prints_each_new_version_and_ignores_a_confirmation(server, setup, daemons):
    """docs/examples/follow-cache-file (installed with the package) as an app developer runs it: one line for the
    file as it is, one per version syncd publishes; a refresh that only confirms the content (mtime moves) is not a
    version."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    follower = subprocess.Popen(["/usr/bin/python3", EXAMPLES / "follow-cache-file", setup.cache_file("posts"),
                                 "--versions", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        saved_at = setup.cache_doc("posts")["savedAt"]
        assert follower.stdout.readline() == f"{saved_at} 2 records, 0 pending\n"
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0       # 304: the mtime moves only
        server.set_records("posts", POSTS + [{"id": 3, "title": "Post 3"}])
        assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
        out, err = follower.communicate(timeout=30)
        assert (follower.returncode, err) == (0, "")
        assert out == f"{setup.cache_doc('posts')['savedAt']} 3 records, 0 pending\n"
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
