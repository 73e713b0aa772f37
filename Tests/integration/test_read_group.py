"""ReadGroup= and ControlGroup= as another user sees them (syncd.conf(5), docs/control-api.md "Access"): readers
read records and the cache files but cannot change or erase anything; the control group can change records but
not log out or reload; every refusal names who may, and loses nothing. Runs against the release binaries too
(`make integration-release`: these are the access rules users get)."""
import json
import os
import subprocess

import pytest

from conftest import BIN, POSTS, wait_for

# nobody's primary group on Debian; the control group of the reader test exists nowhere (a name syncd accepts).
NOBODYS_GROUP = "nogroup"
NO_SUCH_GROUP = "syncd-test-no-group"

pytestmark = pytest.mark.release_binaries


def syncctl(setup, who, *args, stdin=None):
    cmd = [str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), *args]
    env = dict(os.environ, NO_COLOR="1")
    if who is None:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=env, input=stdin)
    return who.run(cmd, user="nobody", capture_output=True, text=True, timeout=30, env=env, input=stdin)


def start(server, setup, daemons, another_user, **groups):
    """A daemon whose runtime and cache folders lie in the another_user folder (so nobody can reach them), with the
    writable source posts synced."""
    setup.runtime = another_user.folder / "run"
    setup.cache = another_user.folder / "cache"
    setup.write_main("".join(f"{key}={value}\n" for key, value in groups.items()))
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    return d


def test_a_read_group_member_reads_records_and_files_but_changes_nothing(server, setup, daemons, another_user):
    start(server, setup, daemons, another_user, ControlGroup=NO_SUCH_GROUP, ReadGroup=NOBODYS_GROUP)
    before = setup.cache_file("posts").read_bytes()

    listed = syncctl(setup, another_user, "list", "posts", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == POSTS
    got = syncctl(setup, another_user, "get", "posts", "1")
    assert got.returncode == 0 and json.loads(got.stdout) == POSTS[0], got.stderr
    # The cache file belongs to the read group (0640): the reader's own cat reads it.
    assert setup.cache_file("posts").stat().st_gid == 65534
    cat = another_user.run(["cat", setup.cache_file("posts")], user="nobody", capture_output=True, timeout=30)
    assert cat.returncode == 0 and cat.stdout == before
    # Watch is a reader's call too: its first lines describe each source as it is now.
    watch = another_user.popen([BIN / "syncctl", "--socket", setup.runtime / "io.syncd.Manager", "watch", "--json"],
                               user="nobody", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(watch.stdout.readline())
        assert (first["source"], first["event"], first["records"]) == ("posts", "current", 2)
    finally:
        watch.kill()
        watch.wait()
    # So is Changes: the first listing's two records, and the source's change number.
    changes = syncctl(setup, another_user, "changes", "posts", "--json")
    assert changes.returncode == 0, changes.stderr
    assert json.loads(changes.stdout) == {"changed": ["1", "2"], "removed": [], "seq": first["seq"]}

    control = f'root, the user syncd runs as, or membership in group "{NO_SUCH_GROUP}" (ControlGroup=)'
    for args, needs in [(("put", "posts", "-"), control), (("delete", "posts", "1"), control),
                        (("refresh", "posts"), control), (("outbox",), control),
                        (("logout",), "root or the user syncd runs as"), (("reload",), "root or the user syncd runs as")]:
        r = syncctl(setup, another_user, *args, stdin='{"id": 9, "title": "not allowed"}')
        assert (r.returncode, r.stderr) == (1, f"syncctl: permission denied: {args[0]} needs {needs}\n"), args
    # Nothing was queued, erased or rewritten.
    assert setup.cache_file("posts").read_bytes() == before
    status = json.loads(syncctl(setup, None, "status", "posts", "--json").stdout)
    assert (status["records"], status["pending"]) == (2, 0)


def test_a_control_group_member_changes_records_but_cannot_log_out_or_reload(server, setup, daemons, another_user):
    start(server, setup, daemons, another_user, ControlGroup=NOBODYS_GROUP)
    for args in (("logout",), ("logout", "--discard-pending"), ("reload",)):
        r = syncctl(setup, another_user, *args)
        assert (r.returncode, r.stderr) == (1, f"syncctl: permission denied: {args[0]} needs root or the user syncd runs as\n")
    assert setup.cache_doc("posts")["records"] == POSTS
    # Everything else stays the control group's: a change is queued.
    put = syncctl(setup, another_user, "put", "posts", "-", stdin='{"id": 3, "title": "Post 3"}')
    assert put.returncode == 0, put.stderr
    wait_for(lambda: {"id": 3, "title": "Post 3"} in server.records("posts"), what="the put to reach the server")


def test_anyone_else_reads_only_the_status_and_is_told_which_group_to_join(server, setup, daemons, another_user):
    start(server, setup, daemons, another_user, ControlGroup=NO_SUCH_GROUP, ReadGroup="syncd-test-readers")
    assert syncctl(setup, another_user, "status").returncode == 0
    r = syncctl(setup, another_user, "list", "posts")
    assert (r.returncode, r.stderr) == (1, 'syncctl: permission denied: list needs root, the user syncd runs as, or '
                                           'membership in group "syncd-test-readers" (ReadGroup=) or group '
                                           f'"{NO_SUCH_GROUP}" (ControlGroup=)\n')
    # The files are not the reader group's (it does not exist): another user cannot read them.
    cat = another_user.run(["cat", setup.cache_file("posts")], user="nobody", capture_output=True, timeout=30)
    assert cat.returncode != 0 and b"Permission denied" in cat.stderr


def test_read_group_set_later_gives_existing_cache_files_its_group_at_the_next_start(server, setup, daemons, another_user):
    d = start(server, setup, daemons, another_user, ControlGroup=NO_SUCH_GROUP)
    before = setup.cache_file("posts").read_bytes()
    assert setup.cache_file("posts").stat().st_gid != 65534
    d.stop()
    # ReadGroup= set while the collection does not change: its file is not rewritten, yet its readers read it.
    setup.write_main(f"ControlGroup={NO_SUCH_GROUP}\nReadGroup={NOBODYS_GROUP}\n")
    d = daemons(setup)
    d.wait_log("posts: gave the cache file")
    assert setup.cache_file("posts").stat().st_gid == 65534
    cat = another_user.run(["cat", setup.cache_file("posts")], user="nobody", capture_output=True, timeout=30)
    assert cat.returncode == 0 and cat.stdout == before
    assert syncctl(setup, None, "refresh", "posts", "--wait").returncode == 0
    assert setup.cache_file("posts").read_bytes() == before
    assert "moved it to" not in d.output(), "the file is syncd's own: not taken for a damaged one"
