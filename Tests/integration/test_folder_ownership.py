"""Folders another user made first are never adopted (docs/syncd.8.md, FILES, "Ownership"): with
StateDirectory=/CacheDirectory=/RuntimeDirectory= below a sticky world-writable folder (as /var/tmp is) where
"nobody" created the folder first, root's syncd refuses to start, and to reload into such a configuration, with a
message naming the folder, its owner and the fix, and writes nothing there."""
import json
import os
import pwd
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from conftest import POSTS, wait_for
from test_syncctl import syncctl

NOBODY = pwd.getpwnam("nobody")
KINDS = {"state": "state directory", "cache": "cache directory", "run": "runtime directory"}
KEYS = {"state directory": "StateDirectory=", "cache directory": "CacheDirectory=", "runtime directory": "RuntimeDirectory="}


@pytest.fixture
def sticky():
    """A folder below /var/tmp with /var/tmp's own mode, 1777; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="syncd-test-sticky-", dir="/var/tmp"))
    try:
        os.chmod(folder, 0o1777)
        yield folder
    finally:
        shutil.rmtree(folder)


def as_nobody_mkdir(another_user, path):
    """`nobody` creates the folder first (the another_user fixture; mkdir is a system binary)."""
    another_user.run(["/usr/bin/mkdir", "-m", "0777", path], user="nobody", check=True, timeout=30)
    assert path.stat().st_uid == NOBODY.pw_uid


def point_at(setup, sticky):
    setup.state, setup.cache, setup.runtime = sticky / "state", sticky / "cache", sticky / "run"
    setup.write_main()


def refused_start(daemons, setup):
    """Starts syncd, which must refuse: exit status 78 (EX_CONFIG, the unit does not restart into it); its log."""
    d = daemons(setup)
    wait_for(lambda: d.proc.poll() is not None, timeout=10, what="syncd to exit")
    assert d.proc.returncode == 78
    return d.output()


def refusal(path, kind):
    return (f"use {kind} {path}: owned by uid {NOBODY.pw_uid} (nobody), not by root (syncd's user), so that user could "
            f"change or delete syncd's data; if syncd did not make it, remove it if it is empty (rmdir {path}): syncd "
            f"creates it itself, or set {KEYS[kind]} to another folder; if it holds syncd's own data, chown it "
            f"(chown -R root {path})")


@pytest.mark.parametrize("which", ["state", "cache", "run"])
def test_the_daemon_refuses_a_folder_nobody_made_first_and_writes_nothing_there(server, setup, daemons, sticky, which, another_user):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    point_at(setup, sticky)
    theirs = sticky / which
    as_nobody_mkdir(another_user, theirs)
    d = daemons(setup)
    wait_for(lambda: d.proc.poll() is not None, timeout=10, what="syncd to exit")
    assert d.proc.returncode == 78         # EX_CONFIG: the unit does not restart into it
    assert f"Failed to start: {refusal(theirs, KINDS[which])}" in d.output()
    assert list(theirs.iterdir()) == []                                       # nothing written in nobody's folder
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o777 and theirs.stat().st_uid == NOBODY.pw_uid  # nor changed
    assert not server.requests("/posts")
    # What syncd did create below the sticky folder is its own: nothing else was written, no socket, no store.
    for name in set(KINDS) - {which}:
        if (sticky / name).exists():
            assert (sticky / name).stat().st_uid == 0 and list((sticky / name).iterdir()) == []


def test_once_refuses_a_cache_folder_nobody_made_first(server, setup, sticky, another_user):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    point_at(setup, sticky)
    as_nobody_mkdir(another_user, sticky / "cache")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert refusal(sticky / "cache", "cache directory") in r.stderr
    assert list((sticky / "cache").iterdir()) == []
    assert not server.requests("/posts")


def test_an_account_folder_nobody_owns_is_refused(server, setup, daemons, sticky):
    """The state directory is root's, but the account folder in it is nobody's (given to them, as a mistake)."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    point_at(setup, sticky)
    (sticky / "state" / "default").mkdir(parents=True, mode=0o700)
    os.chmod(sticky / "state", 0o700)
    os.chown(sticky / "state" / "default", NOBODY.pw_uid, NOBODY.pw_gid)
    d = daemons(setup)
    wait_for(lambda: d.proc.poll() is not None, timeout=10, what="syncd to exit")
    assert d.proc.returncode == 78
    folder = sticky / "state" / "default"
    assert (f"Failed to start: use account folder {folder}: owned by uid {NOBODY.pw_uid} (nobody), not by root "
            f"(syncd's user)") in d.output()
    assert list(folder.iterdir()) == []


def test_a_world_writable_folder_is_refused_even_roots(server, setup, daemons, sticky):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    point_at(setup, sticky)
    (sticky / "cache").mkdir()
    os.chmod(sticky / "cache", 0o1777)
    output = refused_start(daemons, setup)
    # Shared as /tmp is: a folder of syncd's own below it, never a chmod of the shared one.
    assert (f"Failed to start: use cache directory {sticky}/cache: its mode 1777 lets every user write in it: it is a "
            f"folder every user shares, as /tmp is, not one of syncd's own; set CacheDirectory= to a folder of syncd's own "
            f"below it (CacheDirectory={sticky}/cache/syncd-cache): syncd creates it") in output
    assert list((sticky / "cache").iterdir()) == [] and stat.S_IMODE((sticky / "cache").stat().st_mode) == 0o1777


def test_a_link_nobody_planted_is_named_as_a_link_and_not_followed(server, setup, daemons, sticky, another_user):
    """nobody plants a link where syncd's state directory goes, to a folder of root's that would pass: syncd says it
    is a link and to remove it (never chown -R, which would follow it), and nothing reaches the folder it points to."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    point_at(setup, sticky)
    roots = sticky / "roots"
    roots.mkdir(mode=0o755)
    # A relative target ("roots", next to the link): the fixture refuses to hand nobody a path outside its folder.
    another_user.run(["/usr/bin/ln", "-s", "roots", str(sticky / "state")], user="nobody", check=True, timeout=30)
    assert (sticky / "state").resolve() == roots
    assert os.lstat(sticky / "state").st_uid == NOBODY.pw_uid
    output = refused_start(daemons, setup)
    assert (f"Failed to start: use state directory {sticky}/state: it is a symbolic link owned by uid {NOBODY.pw_uid} "
            f"(nobody), not by root (syncd's user), so that user could point it elsewhere; remove the link "
            f"(rm {sticky}/state): syncd creates the folder itself") in output
    assert "chown" not in output
    assert list(roots.iterdir()) == [] and stat.S_IMODE(roots.stat().st_mode) == 0o755
    assert not server.requests("/posts")


def test_once_the_folder_is_removed_syncd_makes_its_own_there(server, setup, daemons, sticky, another_user):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    point_at(setup, sticky)
    as_nobody_mkdir(another_user, sticky / "state")
    (sticky / "state").rmdir()                                                # what the message says to do
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    info = (sticky / "state").stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700)
    assert setup.cache_doc("posts")["records"] == POSTS
    assert d.stop() == 0


def test_folders_syncd_makes_above_its_own_let_every_user_reach_the_socket_and_the_cache(server, setup, daemons, another_user):
    """syncd runs with umask 077, yet the missing folder above its state, cache and runtime directories that it
    makes is 0755 (syncd(8), FILES: every local user may run syncctl status); a folder that was there keeps its mode."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    kept = another_user.folder / "kept"
    kept.mkdir()
    os.chmod(kept, 0o711)
    above = kept / "RL"
    setup.state, setup.cache, setup.runtime = above / "state", above / "cache", above / "run"
    setup.write_main()
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    assert (above.stat().st_uid, stat.S_IMODE(above.stat().st_mode)) == (0, 0o755)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o711
    assert [stat.S_IMODE((above / name).stat().st_mode) for name in ("state", "cache", "run")] == [0o700, 0o750, 0o755]
    r = syncctl(setup, "status", as_user=another_user)
    assert r.returncode == 0, r.stderr
    assert "posts" in r.stdout
    r = another_user.run(["/usr/bin/stat", "-c", "%a %U", str(setup.cache)], user="nobody", capture_output=True,
                         text=True, timeout=30)
    assert (r.returncode, r.stdout) == (0, "750 root\n"), r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS
    assert d.stop() == 0


def test_a_reload_into_a_folder_nobody_made_is_rejected_and_the_old_configuration_kept(running, server, setup, sticky, another_user):
    state_before = setup.state
    theirs = sticky / "state"
    as_nobody_mkdir(another_user, theirs)
    main = setup.config / "syncd.conf"
    main.write_text(main.read_text().replace(f"StateDirectory={state_before}", f"StateDirectory={theirs}"))
    r = syncctl(setup, "reload")
    reason = "Failed to " + refusal(theirs, "state directory")
    assert r.returncode == 1
    assert r.stderr == f"syncctl: reload failed, the old configuration stays in force: {reason}\n"
    assert f"Reload rejected, keeping the previous configuration: {reason}" in running.output()
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"]["reloadRejected"] == reason
    assert f"reload rejected, previous configuration kept: {reason}" in syncctl(setup, "status").stdout
    # The old configuration runs on, in its own folders; nothing reaches nobody's.
    server.set_records("posts", POSTS + [{"id": 3, "title": "Post 3"}])
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert [rec["id"] for rec in setup.cache_doc("posts")["records"]] == [1, 2, 3]
    assert (state_before / "default" / "state.db").exists()
    assert list(theirs.iterdir()) == []
    assert running.proc.poll() is None
