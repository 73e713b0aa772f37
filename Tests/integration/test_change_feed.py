"""The change feed apps follow (syncd.control(7), "Changes"): Watch names the records a refresh changed, Changes
tells an app that was away what happened meanwhile, across a restart, and says when its log no longer reaches;
the shipped example docs/examples/follow-changes keeps a copy that matches the server's records. The whole file
runs against the release binaries too (RELEASE_TESTS in the Makefile)."""
import json
import os
import queue
import signal
import subprocess
import threading

from conftest import BIN, ROOT, wait_for

EXAMPLE = ROOT / "docs" / "examples" / "follow-changes"
VENV_PYTHON = ROOT / "build" / "venv" / "bin" / "python3"


def syncctl(setup, *args):
    return subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), *args],
                          capture_output=True, text=True, timeout=30, env=dict(os.environ, NO_COLOR="1"))


class Watch:
    """`syncctl watch --json`, one parsed event at a time; a missing one fails in 20 s instead of hanging."""

    def __init__(self, setup):
        self.proc = subprocess.Popen([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "watch",
                                      "--json"], stdout=subprocess.PIPE, text=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()

    def event(self, timeout=20):
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"syncctl watch printed nothing within {timeout}s") from None

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(5)


def refresh(setup, source):
    r = syncctl(setup, "refresh", source, "--wait")
    assert r.returncode == 0, r.stderr


def cached(setup, source, ids):
    """The records `ids` as the cache file holds them, by ID."""
    wanted = set(ids)
    return {str(r["id"]): r for r in setup.cache_doc(source)["records"] if str(r["id"]) in wanted}


def test_a_refresh_of_a_large_source_names_the_records_it_changed_and_an_app_away_catches_up_after_a_restart(
        server, setup, daemons):
    records = [{"id": i, "title": f"Post {i}"} for i in range(1, 50_001)]
    server.set_records("big", records)
    setup.add_source("big", server.url("big"))
    d = daemons(setup)
    d.wait_log("big: synced 50000 records", timeout=30)
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    before = setup.cache_file("big").read_bytes()

    # The first listing changed more records than a change lists: Changes from before it says the log does not
    # reach, names the oldest change it answers, and changes nothing.
    r = syncctl(setup, "changes", "big", "--since", "0")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("syncctl: the change log of big starts after that change (the oldest --since it answers is 1); "
                        "list the source again ('syncctl list big') and follow from the change number 'syncctl status big' shows\n")
    assert setup.cache_file("big").read_bytes() == before

    watch = Watch(setup)
    try:
        current = watch.event()
        assert (current["event"], current["records"], current["seq"]) == ("current", 50_000, 1)
        # Three records change on the server: one saved event names exactly them, as the server now has them.
        for i, n in enumerate((10, 25_000, 49_999)):
            records[n - 1] = {"id": n, "title": f"Changed {i}"}
        server.set_records("big", records)
        refresh(setup, "big")
        saved = watch.event()
        assert (saved["event"], saved["seq"], saved["changed"], saved["removed"]) == ("saved", 2, ["10", "25000", "49999"], [])
        server_records = {str(r["id"]): r for r in server.records("big")}
        assert cached(setup, "big", saved["changed"]) == {k: server_records[k] for k in saved["changed"]}
        # A record deleted on the server: the next event (no other came between) names it removed.
        del records[6]
        server.set_records("big", records)
        refresh(setup, "big")
        removed = watch.event()
        assert (removed["event"], removed["seq"], removed["changed"], removed["removed"]) == ("saved", 3, [], ["7"])
        assert not any(str(r["id"]) == "7" for r in server.records("big"))
        assert cached(setup, "big", ["7"]) == {}
    finally:
        watch.stop()

    # The app goes away; syncd restarts and its first refresh brings one more change.
    assert d.stop() == 0
    records[0] = {"id": 1, "title": "While away"}
    server.set_records("big", records)
    d = daemons(setup)
    d.wait_log("big: synced 49999 records", timeout=30)
    wait_for(lambda: syncctl(setup, "changes", "big", "--since", "3", "--json").stdout.strip()
             == json.dumps({"changed": ["1"], "removed": [], "seq": 4}, separators=(",", ":")), what="the change while away")
    # Everything since the app's first seq, each record once in its latest state.
    r = syncctl(setup, "changes", "big", "--since", "1", "--json")
    assert json.loads(r.stdout) == {"changed": ["10", "25000", "49999", "1"], "removed": ["7"], "seq": 4}
    assert cached(setup, "big", ["1"]) == {"1": {"id": 1, "title": "While away"}}
    status = json.loads(syncctl(setup, "status", "big", "--json").stdout)
    assert status["seq"] == 4


def test_the_follow_changes_example_keeps_a_copy_equal_to_the_servers_records(server, setup, daemons, tmp_path):
    posts = [{"id": 1, "title": "Post 1"}, {"id": 2, "title": "Post 2"}]
    server.set_records("posts", posts)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    state = tmp_path / "copy.json"
    env = dict(os.environ, SYNCD_SOCKET=str(setup.runtime / "io.syncd.Manager"))

    def follow(events):
        return subprocess.Popen([str(VENV_PYTHON), str(EXAMPLE), "posts", "--state", str(state), "--events", str(events)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def copy():
        return {k: v for k, v in json.loads(state.read_text())["records"].items()}

    def servers():
        return {str(r["id"]): r for r in server.records("posts")}

    app = follow(1)
    try:
        assert app.stdout.readline() == "caught up: seq 1, 2 records\n"     # no copy yet: listed whole
        server.set_records("posts", [{"id": 1, "title": "Edited"}, {"id": 3, "title": "Post 3"}])
        refresh(setup, "posts")
        out, err = app.communicate(timeout=30)
        assert (app.returncode, err) == (0, "")
        assert out == "seq 2: changed 1 3, removed 2; 2 records\n"
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert copy() == servers()

    # While the app is not running the server changes again; it catches up with one Changes call when it starts.
    server.set_records("posts", [{"id": 1, "title": "Edited"}, {"id": 3, "title": "Post 3 again"}, {"id": 4}])
    refresh(setup, "posts")
    app = follow(1)
    try:
        assert app.stdout.readline() == "caught up: seq 3, 3 records\n"
        assert copy() == servers()
    finally:
        app.kill()
        app.wait()


def test_local_changes_name_their_record_in_the_local_event_and_in_changes_and_a_logout_keeps_the_numbers(server, setup, daemons):
    posts = [{"id": 1, "title": "Post 1"}, {"id": 2, "title": "Post 2"}]
    server.set_records("posts", posts)
    # The server refuses creates for now (503: retried later), so the put stays queued.
    server.fault("posts", kind="status", status=503, method="POST")
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    watch = Watch(setup)
    try:
        current = watch.event()
        assert (current["event"], current["seq"]) == ("current", 1)
        put = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                             input=json.dumps({"id": "n1", "title": "Offline"}), capture_output=True, text=True, timeout=30)
        assert put.returncode == 0, put.stderr
        event = watch.event()
        while event["event"] != "local":
            event = watch.event()
        assert (event["seq"], event["changed"], event["removed"]) == (2, ["n1"], [])
    finally:
        watch.stop()
    # The change is in the cache file and still queued; the server has not got it.
    doc = setup.cache_doc("posts")
    assert doc["pending"] == ["n1"] and doc["records"][-1] == {"id": "n1", "title": "Offline"}
    assert server.records("posts") == posts
    r = syncctl(setup, "changes", "posts", "--since", "1")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == ("changed n1\n\n1 record changed and 0 removed after change 1; "
                        "the source is at change 2 (follow with --since 2).\n")
    # A logout erases the records and the log, not the numbers: they go on, and Changes from before it says the log
    # does not reach back, so the app lists the source again.
    folder = setup.cache_file("posts").parent
    inode = folder.stat().st_ino
    assert syncctl(setup, "logout", "--discard-pending").returncode == 0
    # The account's folder is emptied, not replaced: an app's inotify watch on it goes on (syncd.cache(5)).
    assert folder.stat().st_ino == inode and not setup.cache_file("posts").exists()
    assert json.loads(syncctl(setup, "status", "posts", "--json").stdout)["seq"] == 3
    for since in ("0", "2"):
        r = syncctl(setup, "changes", "posts", "--since", since)
        assert (r.returncode, r.stdout) == (1, "")
        assert "the oldest --since it answers is 3" in r.stderr
    # The oldest it names is one it answers; without --since, changes begins there and says so.
    r = syncctl(setup, "changes", "posts", "--since", "3", "--json")
    assert (r.returncode, r.stderr, json.loads(r.stdout)) == (0, "", {"changed": [], "removed": [], "seq": 3})
    r = syncctl(setup, "changes", "posts", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {"changed": [], "removed": [], "seq": 3}
    assert r.stderr == ("syncctl: note: syncd's change log of posts begins after change 3 (older changes are no longer "
                        "kept); listing the changes after it\n")
