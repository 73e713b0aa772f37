"""A state folder written by an earlier syncd (Tests/fixtures/store-v1, made by its make-fixture.py) is taken
over without a refetch: records, outbox, conflicts and validators survive, and the next refresh is conditional."""
import pytest
import json
import subprocess
import shutil
import sqlite3
import time
from pathlib import Path

from conftest import ROOT, fill_filesystem

FIXTURE = ROOT / "Tests" / "fixtures" / "store-v1"


def adopt_fixture(setup, server, **extra):
    """Copies the fixture's state and cache folders into `setup`, serves the records its server held and
    points the stored URLs at this test's server (the fixture was written against another port)."""
    shutil.copytree(FIXTURE / "state", setup.state)
    shutil.copytree(FIXTURE / "cache", setup.cache)
    for name, keys in json.loads((FIXTURE / "sources.json").read_text()).items():
        server.set_records(name, json.loads((FIXTURE / "server" / f"{name}.json").read_text()))
        setup.add_source(name, server.url(name), **keys, **(extra if keys.get("Writable") == "yes" else {}))
    old = json.loads((FIXTURE / "fixture.json").read_text())["url"]
    with sqlite3.connect(setup.db()) as db:
        db.execute("UPDATE sources SET url = replace(url, ?1, ?2)", (old, server.base))
    db.close()


def stored(setup):
    """The outbox, conflicts and validators as the store holds them."""
    with sqlite3.connect(f"file:{setup.db()}?mode=ro", uri=True) as db:
        outbox = db.execute("SELECT source, record_id, operation, state FROM outbox ORDER BY seq").fetchall()
        conflicts = db.execute("SELECT source, record_id, remote_version FROM conflicts").fetchall()
        etags = dict(db.execute("SELECT name, etag FROM sources").fetchall())
    db.close()
    return outbox, conflicts, etags


def fixture_doc(name):
    return json.loads((FIXTURE / "cache" / "default" / f"{name}.json").read_bytes())


def test_an_earlier_store_is_taken_over_without_a_refetch(server, setup):
    # The queued create meets a 503 in the first run: its outcome is unknown (a proxy's 503 may come after the
    # server took it), so the next run sends it only once a listing read LostCreateWaitSec= later lacks it.
    adopt_fixture(setup, server, TimeoutSec="1s", LostCreateWaitSec="2s")
    outbox, conflicts, etags = stored(setup)
    assert [row[3] for row in outbox] == ["conflict", "parked", "queued"]
    assert conflicts == [("posts", "1", "2026-11-29T11:00:00Z")]

    # First run with the server down: everything comes from what the earlier syncd left.
    server.fault("posts", kind="status", status=503)
    server.fault("users", kind="status", status=503)
    r = setup.syncd("--once")
    assert "HTTP 503" in r.stderr, r.stderr
    for name in ("posts", "users"):
        doc, before = setup.cache_doc(name), fixture_doc(name)
        for key in ("records", "pending", "parked", "conflicts", "etag"):
            assert doc[key] == before[key], (name, key)
    assert stored(setup) == (outbox, conflicts, etags)

    # The server is back: the queued change goes out, and both listings are asked for conditionally.
    time.sleep(2.5)
    server.clear_fault("posts")
    server.clear_fault("users")
    server.clear_requests()
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert "users: not modified (HTTP 304), 2 records current" in r.stderr
    gets = {req["path"]: req["headers"] for req in server.requests() if req["method"] == "GET"}
    assert gets["/users"]["if-none-match"] == etags["users"]
    assert gets["/posts"]["if-none-match"] == etags["posts"]
    assert [req["path"] for req in server.requests() if req["method"] == "POST"] == ["/posts"]
    assert {"id": "queued", "title": "queued note"} in server.records("posts")
    doc = setup.cache_doc("posts")
    assert [record["id"] for record in doc["records"]] == [1, 2, "queued", "bad"]
    assert doc["records"][0]["title"] == "local edit"          # the conflict keeps the local version
    assert doc["conflicts"] == [1] and doc["parked"] == ["bad"] and doc["pending"] == ["bad"]
    outbox_after, conflicts_after, _ = stored(setup)
    assert [row[3] for row in outbox_after] == ["conflict", "parked"]
    assert conflicts_after == conflicts


@pytest.mark.release_binaries
def test_a_conversion_a_full_disk_stops_keeps_the_earlier_copy_and_says_so(server, setup):
    adopt_fixture(setup, server)
    folder = setup.cache / setup.account
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    shutil.rmtree(folder)
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0750", "tmpfs", str(folder)], check=True)
    try:
        for name, data in files.items():
            (folder / name).write_bytes(data)
        filler = fill_filesystem(folder / "filler")
        server.fault("users", kind="status", status=503)
        r = setup.syncd("--once")
        assert r.returncode == 1
        assert ("users: Failed to convert the stored listing to the new storage format: Failed to write cache file "
                f"{folder}/users.json, keeping the previous copy (2 cached records): write {folder}/users.json: "
                "No space left on device") in r.stderr, r.stderr
        assert ("the records are still in the state database in the earlier format and the cache file is as it was, "
                "and the conversion is tried again before the next refresh") in r.stderr, r.stderr
        assert "no other copy" not in r.stderr and "damaged" not in r.stderr, r.stderr
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "filler"} == files
        with sqlite3.connect(setup.db()) as db:
            assert db.execute("SELECT DISTINCT source FROM v1_chunks ORDER BY source").fetchall() == [("posts",), ("users",)]
        db.close()
        # Room again: the conversion goes through before the refresh, nothing fetched whole.
        filler.unlink()
        server.clear_fault("users")
        r = setup.syncd("--once")
        assert "users: converted the stored listing (2 records) to the new storage format" in r.stderr, r.stderr
        assert setup.cache_doc("users")["records"] == fixture_doc("users")["records"]
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
