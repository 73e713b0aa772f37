"""One source's story in the journal, under the real systemd in the namespace (namespaced_systemd.py):
every message about a source carries SYNCD_SOURCE= (syncd(8), LOGGING), its successes at info priority
too, so `journalctl -u syncd SYNCD_SOURCE=posts` shows the refreshes that worked and not only the failures.

The daemon runs from `make install` (the fixtures of test_systemd.py) with the unit as shipped: its
stderr is the journal's stream, and it writes native journal entries to journald's own socket.
"""
import json

from conftest import POSTS, wait_for
from namespaced_systemd import host_unchanged  # noqa: F401 (a fixture)
from test_systemd import SOCKET, installed_root, systemd  # noqa: F401 (fixtures)


def entries(sd, *matches):
    """The unit's journal entries (journalctl -o json), narrowed by FIELD=value matches."""
    output = sd.run("journalctl", "-u", "syncd", "-o", "json", "--no-pager", *matches).stdout
    return [json.loads(line) for line in output.splitlines()]


def messages(sd, *matches):
    return [(e["PRIORITY"], e["MESSAGE"]) for e in entries(sd, *matches)]


def test_journal_tells_one_sources_story(server, systemd):
    sd = systemd
    server.set_records("posts", POSTS)
    server.set_records("comments", [{"id": 7, "body": "hi"}])
    sd.run("systemd-sysusers")
    sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
    sd.run("systemctl", "daemon-reload")
    sd.run("systemctl", "start", "syncd")

    # The first refresh fills the cache: an info-priority success, filed under the source.
    def synced():
        return ("6", "posts: synced 2 records (listing changed)") in messages(sd, "SYNCD_SOURCE=posts")
    wait_for(synced, timeout=30, what=f"posts' first sync in the journal\n{sd.journal('syncd')}")

    # A second refresh finds the listing not modified: the 304 is in the source's story too.
    refresh = sd.run("/usr/bin/syncctl", "--socket", SOCKET, "refresh", "posts", "--wait")
    assert refresh.stdout == "posts: unchanged, 2 records\n", refresh.stdout + refresh.stderr

    def not_modified():
        return ("6", "posts: not modified (HTTP 304), 2 records current") in messages(sd, "SYNCD_SOURCE=posts")
    wait_for(not_modified, timeout=10, what=f"the 304 in the journal\n{sd.journal('syncd')}")

    # A source added by a reload: "new source" is filed under it, and its sync too.
    sd.write("/etc/syncd/sources.d/comments.source", f"[Source]\nURL={server.url('comments')}\n")
    sd.run("systemctl", "reload", "syncd")

    def comments_synced():
        return ("6", "comments: synced 1 record (listing changed)") in messages(sd, "SYNCD_SOURCE=comments")
    wait_for(comments_synced, timeout=30, what=f"comments' first sync in the journal\n{sd.journal('syncd')}")
    assert ("6", "comments: new source") in messages(sd, "SYNCD_SOURCE=comments")

    # Each source's story holds its own messages only, and every message of the unit that is about a source
    # (it begins with "NAME: ") carries that source's field, whatever its priority.
    posts = messages(sd, "SYNCD_SOURCE=posts")
    assert posts and all(message.startswith("posts: ") for _, message in posts), posts
    assert not any(message.startswith("posts: ") for _, message in messages(sd, "SYNCD_SOURCE=comments"))
    about_a_source = [e for e in entries(sd) if str(e["MESSAGE"]).startswith(("posts: ", "comments: "))]
    assert len(about_a_source) >= 4
    for entry in about_a_source:
        assert entry.get("SYNCD_SOURCE") == entry["MESSAGE"].split(": ", 1)[0], entry
    # The daemon-wide messages carry none.
    started = [e for e in entries(sd) if str(e["MESSAGE"]).startswith("Started: account default")]
    assert started and "SYNCD_SOURCE" not in started[0], started

    # The same source seen by syncctl status under the unit: its cache file is the unit's cache folder's.
    status = sd.run("/usr/bin/syncctl", "--socket", SOCKET, "status", "posts")
    lines = status.stdout.splitlines()
    assert lines[0] == "● posts — idle", status.stdout
    assert "  Cache file: /var/cache/syncd/default/posts.json" in lines, status.stdout
    assert "     Records: 2 cached, 0 pending, 0 parked, 0 conflicts" in lines, status.stdout
    unknown = sd.run("/usr/bin/syncctl", "--socket", SOCKET, "status", "post", check=False)
    assert (unknown.returncode, unknown.stderr) == (1, "syncctl: no such source: post; did you mean 'posts'?\n")

    sd.run("systemctl", "stop", "syncd")
