"""The shipped system unit under a real systemd (252 here), booted in its own namespaces.

`make install PREFIX=/usr DESTDIR=<tmp>/root` runs on the host and writes only below the test's temp
directory (and the tree's own build/ folder); that tree is the top layer of the namespaced systemd's
/usr, /etc and /var (namespaced_systemd.py says how the host is kept out, and checks it afterwards).

The daemon runs with the unit's full hardening, so this also proves that the Swift binary, libcurl,
SQLite and Dispatch work under MemoryDenyWriteExecute=, SystemCallFilter= and the Protect* family.
Nothing is skipped: if systemd cannot boot, the test fails with its console log.
"""
import json
import re
import subprocess
import time

import pytest

from conftest import POSTS, ROOT, wait_for
from namespaced_systemd import NamespacedSystemd, host_unchanged  # noqa: F401 (a fixture)

SOCKET = "/run/syncd/io.syncd.Manager"


@pytest.fixture(scope="module")
def installed_root(tmp_path_factory):
    """`make install PREFIX=/usr` into a temporary DESTDIR (builds the release binaries if needed)."""
    dest = tmp_path_factory.mktemp("install") / "root"
    result = subprocess.run(["make", "-C", str(ROOT), "install", "PREFIX=/usr", f"DESTDIR={dest}"],
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (dest / "usr/lib/systemd/system/syncd.service").is_file()
    return dest


@pytest.fixture
def systemd(tmp_path, installed_root, host_unchanged):
    sd = NamespacedSystemd(tmp_path / "ns", installed_root)
    yield sd
    sd.close()


def status_of(sd, pid, field):
    status = sd.run("cat", f"/proc/{pid}/status").stdout
    return re.search(rf"^{field}:\s*(.*)$", status, re.MULTILINE).group(1).split()


def test_system_unit_runs_hardened_under_systemd(server, systemd):
    sd = systemd
    server.set_records("posts", POSTS)
    # The first request stalls and then breaks off: READY=1 must not wait for the network (syncd(8) GUARANTEES 1).
    server.fault("posts", kind="stall", seconds=3, times=1)

    sd.run("systemd-sysusers")
    uid = int(sd.run("getent", "passwd", "syncd").stdout.split(":")[2])
    gid = int(sd.run("getent", "group", "syncd").stdout.split(":")[2])
    sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
    sd.run("systemctl", "daemon-reload")

    # Type=notify: `systemctl start` returns once syncd sent READY=1, i.e. while the refresh still stalls.
    sd.run("systemctl", "start", "syncd")
    state = sd.show("syncd", "ActiveState", "SubState", "StatusText", "Result", "MainPID", "Type", "NotifyAccess")
    assert (state["ActiveState"], state["SubState"], state["Result"]) == ("active", "running", "success"), state
    assert state["Type"] == "notify" and state["NotifyAccess"] == "main"
    assert state["StatusText"].strip(), "STATUS= reached systemd"
    main_pid = int(state["MainPID"])
    assert main_pid > 0

    # The main process runs as syncd:syncd, with no capability, no new privileges and a seccomp filter.
    assert status_of(sd, main_pid, "Uid") == [str(uid)] * 4
    assert status_of(sd, main_pid, "Gid") == [str(gid)] * 4
    assert status_of(sd, main_pid, "CapEff") == ["0000000000000000"]
    assert status_of(sd, main_pid, "CapBnd") == ["0000000000000000"]
    assert status_of(sd, main_pid, "NoNewPrivs") == ["1"]
    assert status_of(sd, main_pid, "Seccomp") == ["2"]

    # After the broken first attempt the retry fills the cache: files 0640, folders 0750, group syncd.
    cache = "/var/cache/syncd/default/posts.json"
    wait_for(lambda: sd.run("test", "-f", cache, check=False).returncode == 0, timeout=30,
             what=f"{cache}\n{sd.journal('syncd')}")
    document = json.loads(sd.run("cat", cache).stdout)
    assert document["records"] == POSTS and document["source"] == "posts"
    listing = {}
    for path in (cache, "/var/cache/syncd/default", "/var/cache/syncd", "/var/lib/syncd", "/run/syncd"):
        mode, user, group = sd.run("stat", "-c", "%a %U %G", path).stdout.split()
        listing[path] = (mode, user, group)
    assert listing[cache] == ("640", "syncd", "syncd")
    assert listing["/var/cache/syncd/default"] == ("750", "syncd", "syncd")
    assert listing["/var/cache/syncd"] == ("750", "syncd", "syncd")
    assert listing["/var/lib/syncd"] == ("700", "syncd", "syncd")
    assert listing["/run/syncd"] == ("755", "syncd", "syncd")
    assert sd.run("test", "-f", "/var/lib/syncd/default/state.db", check=False).returncode == 0

    # Logs reach the journal with their priorities (<N> prefixes on stderr).
    entries = [json.loads(line) for line in
               sd.run("journalctl", "-u", "syncd", "-o", "json", "--no-pager").stdout.splitlines()]
    started = [e for e in entries if str(e.get("MESSAGE", "")).startswith("Started: account default")]
    assert started and started[0]["PRIORITY"] == "5", entries
    assert started[0]["_UID"] == str(uid)
    # Native journal entries carry structured fields (syncd(8), JOURNAL FIELDS): the broken first attempt
    # is a "refresh failed", the retry that filled the cache a "source recovered", both for SYNCD_SOURCE=posts.
    failed = [e for e in entries if e.get("MESSAGE_ID") == "8a704ae683b94d20b280c348ce02a23f"]
    assert failed and failed[0]["SYNCD_SOURCE"] == "posts" and failed[0]["PRIORITY"] == "4", entries
    recovered = [e for e in entries if e.get("MESSAGE_ID") == "9d06ba59b61e4ff89dbe4bc32504e50a"]
    assert recovered and recovered[0]["SYNCD_SOURCE"] == "posts" and recovered[0]["PRIORITY"] == "5", entries
    # No system call was refused in a way that the daemon noticed (a seccomp denial shows up as EPERM).
    assert "errno=1\n" not in sd.journal("syncd")

    # ---- Needs a working `syncctl` (written on the syncctl branch). Until it is merged here, `syncctl`
    # is a stub that prints its name and exits 0: `systemctl reload` then "succeeds" without reloading
    # and the assertions on the journal and on the control socket below fail. That is expected on the
    # `systemd` branch alone and must pass on the merged tree.
    journal_before = sd.journal("syncd").count("Configuration reloaded")
    sd.run("systemctl", "reload", "syncd")      # ExecReload=syncctl reload: returns when the reload is done
    assert sd.journal("syncd").count("Configuration reloaded") == journal_before + 1, sd.journal("syncd")
    # A bad configuration is rejected: `systemctl reload` fails and the daemon keeps running on the old one.
    sd.write("/etc/syncd/syncd.conf.d/50-bad.conf", "[Refresh]\nIntervalSec=soon\n")
    assert sd.run("systemctl", "reload", "syncd", check=False).returncode != 0
    assert sd.show("syncd", "ActiveState")["ActiveState"] == "active"
    # The rejection is an error-priority entry naming the file and line, and syncctl status shows it.
    rejected = [json.loads(line) for line in sd.run(
        "journalctl", "-u", "syncd", "-o", "json", "--no-pager", "MESSAGE_ID=00411ed163d948e1b0d9ddbd73b6a8ea").stdout.splitlines()]
    assert [(e["PRIORITY"], e["CONFIG_FILE"], e["CONFIG_LINE"]) for e in rejected] == [
        ("3", "/etc/syncd/syncd.conf.d/50-bad.conf", "2")], rejected
    status = json.loads(sd.run("/usr/bin/syncctl", "--socket", SOCKET, "status", "--json").stdout)
    assert status["daemon"]["reloadRejected"].startswith("/etc/syncd/syncd.conf.d/50-bad.conf:2: IntervalSec: ")
    sd.run("rm", "/etc/syncd/syncd.conf.d/50-bad.conf")
    assert sd.run("test", "-S", SOCKET, check=False).returncode == 0, f"no control socket at {SOCKET}"
    status = sd.run("/usr/bin/syncctl", "--socket", SOCKET, "status", "--json")
    assert [s["name"] for s in json.loads(status.stdout)["sources"]] == ["posts"]
    # ---- end of the part that needs syncctl

    # SIGTERM: STOPPING=1, exit 0; systemd records a clean stop.
    sd.run("systemctl", "stop", "syncd")
    stopped = sd.show("syncd", "ActiveState", "Result", "ExecMainStatus", "ExecMainCode")
    assert (stopped["ActiveState"], stopped["Result"], stopped["ExecMainStatus"]) == ("inactive", "success", "0"), stopped
    assert "Stopped" in sd.journal("syncd")


def test_watchdog_keeps_the_service_alive(server, systemd):
    """WATCHDOG=1 at half of WatchdogSec= from the main loop, accepted under NotifyAccess=main."""
    sd = systemd
    server.set_records("posts", POSTS)
    sd.run("systemd-sysusers")
    sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
    sd.write("/run/systemd/system/syncd.service.d/50-watchdog.conf", "[Service]\nWatchdogSec=2s\n")
    sd.run("systemctl", "daemon-reload")
    sd.run("systemctl", "start", "syncd")
    first = sd.show("syncd", "MainPID", "WatchdogUSec")
    assert first["WatchdogUSec"] in ("2s", "2000000")
    time.sleep(6)   # three watchdog periods
    later = sd.show("syncd", "ActiveState", "MainPID", "NRestarts", "WatchdogTimestampMonotonic")
    assert later["ActiveState"] == "active" and later["MainPID"] == first["MainPID"], later
    assert later["NRestarts"] == "0"
    assert int(later["WatchdogTimestampMonotonic"]) > 0, "systemd received WATCHDOG=1"
    sd.run("systemctl", "stop", "syncd")
    assert sd.show("syncd", "Result")["Result"] == "success"


def test_user_unit_runs_under_a_user_manager(systemd):
    """The user unit under `systemctl --user`: XDG directories, seccomp hardening, clean stop."""
    sd = systemd
    sd.run("useradd", "--create-home", "--uid", "1500", "syncdtest")
    home = "/home/syncdtest"
    sd.write(f"{home}/posts.json", json.dumps(POSTS))
    sd.write(f"{home}/.config/syncd/sources.d/posts.source", f"[Source]\nURL=file://{home}/posts.json\n")
    sd.run("chown", "-R", "syncdtest:syncdtest", home)
    sd.run("systemctl", "start", "user@1500.service")
    user = ["systemctl", "--user", "--machine=syncdtest@.host"]
    sd.run(*user, "start", "syncd")
    state = dict(line.split("=", 1) for line in sd.run(
        *user, "show", "syncd", "-p", "ActiveState,SubState,StatusText,MainPID").stdout.splitlines())
    assert (state["ActiveState"], state["SubState"]) == ("active", "running"), state
    assert state["StatusText"].strip()
    pid = int(state["MainPID"])
    assert status_of(sd, pid, "Uid") == ["1500"] * 4
    assert status_of(sd, pid, "NoNewPrivs") == ["1"] and status_of(sd, pid, "Seccomp") == ["2"]

    # syncd's own XDG defaults, not systemd 252's StateDirectory= mapping to ~/.config.
    cache = f"{home}/.cache/syncd/default/posts.json"
    wait_for(lambda: sd.run("test", "-f", cache, check=False).returncode == 0, timeout=30, what=cache)
    assert json.loads(sd.run("cat", cache).stdout)["records"] == POSTS
    assert sd.run("stat", "-c", "%a", f"{home}/.local/state/syncd").stdout.split() == ["700"]
    assert sd.run("test", "-f", f"{home}/.local/state/syncd/default/state.db", check=False).returncode == 0
    assert sd.run("test", "-e", f"{home}/.config/syncd/default", check=False).returncode != 0

    sd.run(*user, "stop", "syncd")
    stopped = dict(line.split("=", 1) for line in sd.run(
        *user, "show", "syncd", "-p", "ActiveState,Result").stdout.splitlines())
    assert stopped == {"ActiveState": "inactive", "Result": "success"}, stopped
