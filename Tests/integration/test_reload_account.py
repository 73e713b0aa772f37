"""A reload is all or nothing (syncd.conf(5), DESCRIPTION): changing Account= from alice to bob together with the
source's token from alice's to bob's is rejected whole, with the reason in syncctl reload, syncctl status and the
log; alice's folder never holds bob's records and no request carries bob's token. A restart then applies bob's
account in bob's folder and leaves alice's as it was."""
import json
import signal

import pytest

from conftest import Setup, wait_for
from test_syncctl import syncctl

ALICE = [{"id": "a1", "owner": "alice"}, {"id": "a2", "owner": "alice"}]
BOB = [{"id": "b1", "owner": "bob"}]
REASON = ("Account= changed from alice to bob, which only a restart applies; nothing of the new configuration was "
          "applied: restart syncd to apply it (systemctl restart syncd)")


@pytest.fixture
def accounts(server, tmp_path):
    """alice's and bob's tokens as credential files; the server answers each token with that account's records."""
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "alice-token").write_text("alice-secret\n")
    (creds / "bob-token").write_text("bob-secret\n")
    server.set_records("posts", [])
    server.options("posts", byToken={"alice-secret": ALICE, "bob-secret": BOB})
    setup = Setup(tmp_path / "syncd", account="alice")
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="alice-token")
    return setup, {"CREDENTIALS_DIRECTORY": str(creds)}


def tokens(server):
    return [r["headers"].get("authorization") for r in server.requests("/posts")]


def switch_to_bob(setup, server):
    setup.account = "bob"
    setup.write_main()
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="bob-token")


def test_an_account_switch_by_reload_is_rejected_whole_and_a_restart_applies_it(server, daemons, accounts):
    setup, env = accounts
    d = daemons(setup, env=env)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    alice_file = setup.cache / "alice" / "posts.json"
    assert json.loads(alice_file.read_bytes())["records"] == ALICE
    switch_to_bob(setup, server)

    r = syncctl(setup, "reload")
    assert r.returncode == 1
    assert r.stderr == f"syncctl: reload failed, the old configuration stays in force: {REASON}\n"
    d.wait_log(f"Reload rejected, keeping the previous configuration: {REASON}")
    # SIGHUP takes the same path.
    d.signal(signal.SIGHUP)
    d.wait_log(f"Reload rejected, keeping the previous configuration: {REASON}", count=2)
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"]["account"] == "alice" and status["daemon"]["reloadRejected"] == REASON
    assert f"reload rejected, previous configuration kept: {REASON}" in syncctl(setup, "status").stdout

    # Still alice's configuration, whole: her token, her folder.
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    doc = json.loads(alice_file.read_bytes())
    assert doc["records"] == ALICE and doc["accountID"] == "alice"
    assert not (setup.cache / "bob").exists() and not (setup.state / "bob").exists()
    assert set(tokens(server)) == {"Bearer alice-secret"}
    alice_bytes = alice_file.read_bytes()
    assert d.stop() == 0

    # The restart the message asks for applies bob's account, in bob's folder; alice's stays as it was.
    server.clear_requests()
    d2 = daemons(setup, env=env)
    d2.wait_log("posts: synced 1 record ")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    bob_doc = json.loads((setup.cache / "bob" / "posts.json").read_bytes())
    assert bob_doc["records"] == BOB and bob_doc["accountID"] == "bob"
    assert alice_file.read_bytes() == alice_bytes
    assert (setup.state / "alice" / "state.db").exists() and (setup.state / "bob" / "state.db").exists()
    assert set(tokens(server)) == {"Bearer bob-secret"}
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"]["account"] == "bob" and status["daemon"].get("reloadRejected") is None
    assert d2.stop() == 0


def test_a_good_reload_after_the_rejected_one_clears_the_reason(server, daemons, accounts):
    setup, env = accounts
    d = daemons(setup, env=env)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    switch_to_bob(setup, server)
    assert syncctl(setup, "reload").returncode == 1
    # Back to alice's account with a change a reload does apply: accepted, and the reason is gone.
    setup.account = "alice"
    setup.write_main("[Refresh]\nIntervalSec=1h\n")
    setup.add_source("posts", server.url("posts"), BearerTokenCredential="alice-token")
    r = syncctl(setup, "reload")
    assert r.returncode == 0, r.stderr
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"]["account"] == "alice" and status["daemon"].get("reloadRejected") is None
    assert json.loads((setup.cache / "alice" / "posts.json").read_bytes())["records"] == ALICE
    assert set(tokens(server)) == {"Bearer alice-secret"}
    assert d.stop() == 0


def test_directories_spelled_another_way_are_the_same_folders_and_another_folder_is_still_rejected(running, server, setup):
    """syncd.conf(5): a reload compares the directories as syncd resolves them: /x/state/, /x/./state and /x//state
    are /x/state, so such a reload applies (here with a new source); another folder still needs a restart."""
    state, cache, runtime = setup.state, setup.cache, setup.runtime
    server.set_records("more", [{"id": "m1"}])
    setup.add_source("more", server.url("more"))
    main = setup.config / "syncd.conf"
    main.write_text(f"[Daemon]\nAccount={setup.account}\nStateDirectory={state}/\n"
                    f"CacheDirectory={cache.parent}/./{cache.name}\nRuntimeDirectory={runtime.parent}//{runtime.name}/\n")
    r = syncctl(setup, "reload")
    assert r.returncode == 0, r.stderr
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"].get("reloadRejected") is None
    assert sorted(source["name"] for source in status["sources"]) == ["more", "posts"]
    assert syncctl(setup, "refresh", "more", "--wait").returncode == 0
    assert setup.cache_doc("more")["records"] == [{"id": "m1"}]
    # Another folder, spelled with a trailing slash too: rejected whole, the new source's removal not applied.
    (setup.config / "sources.d" / "more.source").unlink()
    main.write_text(main.read_text().replace(f"StateDirectory={state}/", f"StateDirectory={state}2/"))
    r = syncctl(setup, "reload")
    reason = (f"StateDirectory= changed from {state} to {state}2/, which only a restart applies; nothing of the new "
              f"configuration was applied: restart syncd to apply it (systemctl restart syncd)")
    assert r.returncode == 1
    assert r.stderr == f"syncctl: reload failed, the old configuration stays in force: {reason}\n"
    status = json.loads(syncctl(setup, "status", "--json").stdout)
    assert status["daemon"]["reloadRejected"] == reason
    assert sorted(source["name"] for source in status["sources"]) == ["more", "posts"]
    assert not (state.parent / f"{state.name}2").exists()
    assert running.proc.poll() is None
