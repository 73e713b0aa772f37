"""`syncctl status` with 2,000 sources (issue 13, "scale in sources"): every source is in the reply with its
own state, also after a round in which some sources changed and others did not, so a status served from
each source's cached part (docs/architecture.md, "Status at scale") is checked against what nginx serves
and what the cache files hold. No timing here: speed is measured by bench/sources.py."""
import json
import re

from conftest import wait_for
from test_syncctl import syncctl

COUNT = 2000


def group(index):
    """Which collection source `index` follows: one in a hundred starts on a file that is not there (404)."""
    return "missing" if index % 100 == 99 else "abc"[index % 3]


def write(nginx, name, count):
    (nginx.root / f"{name}.json").write_text(json.dumps([{"id": i, "title": f"{name} {i}"} for i in range(count)]))


def status(setup):
    r = syncctl(setup, "status", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1 and r.stdout.endswith("}\n")     # --json is one line
    return json.loads(r.stdout)


def settled(setup):
    """The status once every source has been tried and none is refreshing."""
    result = {}

    def done():
        result["status"] = status(setup)
        return all(s["lastAttempt"] and s["state"] != "syncing" for s in result["status"]["sources"])
    wait_for(done, timeout=240, interval=1.0, what="every source tried")
    return result["status"]


def check(setup, nginx, reply, expected):
    """Each source exactly once, in configuration order, with the expected state and record count; the counts
    agree with the cache file apps read, and the human output shows the same."""
    names = [f"s{i:04d}" for i in range(COUNT)]
    assert [s["name"] for s in reply["sources"]] == names
    for index, source in enumerate(reply["sources"]):
        state, records, error = expected(index)
        assert source["url"] == nginx.url(f"{group(index)}.json") + f"?n={index}"
        assert (source["state"], source["records"]) == (state, records), source
        assert (error in (source["lastError"] or "")) if error else source["lastError"] is None, source
        if records:
            assert len(setup.cache_doc(source["name"])["records"]) == records
    text = syncctl(setup, "status", "--no-legend").stdout
    shown = dict((m[1], (m[2], int(m[3]))) for m in re.finditer(r"^● (s\d{4}) +(\w+) +(\d+) records? ", text, re.M))
    assert shown == {s["name"]: (s["state"], s["records"]) for s in reply["sources"]}


def test_status_of_2000_sources_is_complete_and_follows_each_change(nginx, setup, daemons):
    setup.write_main("[Network]\nWatchLinks=no\nReachabilityIntervalSec=0\n")
    for name, count in (("a", 1), ("b", 2), ("c", 3)):
        write(nginx, name, count)
    for index in range(COUNT):
        setup.add_source(f"s{index:04d}", nginx.url(f"{group(index)}.json") + f"?n={index}")
    daemons(setup)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")

    first = settled(setup)
    check(setup, nginx, first, lambda i: ("error", 0, "404") if group(i) == "missing" else ("idle", " abc".index(group(i)), None))

    # A round where a third of the sources get a new listing, a third start failing (their file is gone),
    # the missing file appears, and the rest see 304 Not Modified.
    write(nginx, "b", 5)
    (nginx.root / "c.json").unlink()
    write(nginx, "missing", 7)
    r = syncctl(setup, "refresh", "--wait")
    assert r.returncode == 1 and "HTTP 404" in r.stderr, r.stderr
    second = settled(setup)
    after = {"a": ("idle", 1, None), "b": ("idle", 5, None), "c": ("error", 3, "404"), "missing": ("idle", 7, None)}
    check(setup, nginx, second, lambda i: after[group(i)])
    for before, now in zip(first["sources"], second["sources"]):
        if group(int(now["name"][1:])) == "c":
            assert now["lastSuccess"] == before["lastSuccess"] and now["lastAttempt"] >= before["lastAttempt"]
