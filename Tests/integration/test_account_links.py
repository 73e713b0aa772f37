"""An account folder (CACHE/<account>, STATE/<account>) that is a symbolic link is refused at start, by the
daemon and by --once alike (docs/syncd.8.md, FILES): syncd never writes through a link placed by someone else,
so a logout can never leave the account's files behind in the link's target."""
import os
import shutil

import pytest

from conftest import POSTS, wait_for
from test_syncctl import syncctl


def linked(setup, tmp_path, which):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("not syncd's\n")
    parent = setup.cache if which == "cache" else setup.state
    parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, parent / setup.account)
    return parent / setup.account, target


def expected(link, target):
    return (f"use {link} as the account's folder: it is a symbolic link (to {target}), and syncd never follows a link "
            f"into a place it does not own; remove the link (rm {link}): syncd creates the folder itself")


@pytest.mark.parametrize("which", ["cache", "state"])
def test_the_daemon_refuses_a_linked_account_folder(server, setup, daemons, tmp_path, which):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    link, target = linked(setup, tmp_path, which)
    d = daemons(setup)
    wait_for(lambda: d.proc.poll() is not None, timeout=10, what="syncd to exit")
    assert d.proc.returncode == 1
    assert f"Failed to start: {expected(link, target)}" in d.output()
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]          # nothing written through the link
    assert os.path.islink(link) and (target / "keep.txt").read_text() == "not syncd's\n"
    assert not server.requests("/posts")                                     # nothing fetched either


def test_once_refuses_a_linked_cache_folder(server, setup, tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    link, target = linked(setup, tmp_path, "cache")
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert expected(link, target) in r.stderr
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_after_the_link_is_removed_syncd_starts_and_logout_erases_everything(server, setup, daemons, tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    link, target = linked(setup, tmp_path, "cache")
    link.unlink()                                                            # what the message says to do
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    assert setup.cache_file("posts").exists() and not os.path.islink(setup.cache / setup.account)
    assert syncctl(setup, "logout").returncode == 0
    assert not setup.cache_file("posts").exists()
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_a_link_put_in_place_while_syncd_runs_fails_the_refresh_and_nothing_goes_through_it(server, setup, daemons, tmp_path):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    target = tmp_path / "elsewhere"
    target.mkdir()
    folder = setup.cache / setup.account
    shutil.rmtree(folder)
    os.symlink(target, folder)
    server.set_records("posts", POSTS + [{"id": 3, "title": "Post 3"}])
    r = syncctl(setup, "refresh", "posts", "--wait")
    assert r.returncode == 1
    assert r.stderr == f"syncctl: refresh of posts failed: Failed to open the account's storage: {expected(folder, target)}\n"
    assert list(target.iterdir()) == []                                      # nothing written through the link
    folder.unlink()                                                          # what the message says to do
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    assert [r["id"] for r in setup.cache_doc("posts")["records"]] == [1, 2, 3]
