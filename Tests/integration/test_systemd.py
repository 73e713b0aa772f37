"""The shipped system unit under a real systemd (252 here), booted in its own namespaces.

How the host is kept out of it:

* `make install PREFIX=/usr DESTDIR=<tmp>/root` runs on the host and writes only below the test's temp
  directory (and the tree's own build/ folder).
* systemd boots with `unshare --cgroup --pid --fork --mount --mount-proc --uts`. Before it is exec'd,
  a shell inside the new mount namespace (private propagation, so nothing leaks back) mounts:
  - overlayfs on /usr, /etc and /var: the lower layers are the installed tree over the host's own
    directories (`lowerdir=<tmp>/root/usr:/usr`), the upper layers are temp directories, so the
    namespace sees a system with syncd installed and every write (passwd, machine-id, journal,
    /var/lib/syncd, /var/cache/syncd) lands in <tmp>/upper, never in the host's /usr, /etc, /var;
  - tmpfs on /run, /tmp and /home (systemd's sockets, PrivateTmp=, the test user's home);
  - /proc/sys and /sys read-only (as container managers do), so neither systemd nor
    systemd-sysctl.service can change the host kernel's settings; `container=syncd-test` tells
    systemd it runs in a container, so it skips module loading and the like;
  - a fresh cgroup2 hierarchy whose root is a cgroup made for this test (joined before unsharing the
    cgroup namespace), so systemd's slices and scopes live below it and not in the host's tree.
* Teardown kills that systemd (PID 1 of the namespace, by its host PID), which takes every process of
  the namespace and with them the mount namespace and its mounts; then the test's cgroup is removed.
  The test checks that the host's view of syncd's paths and user is the same afterwards.

The daemon runs with the unit's full hardening, so this also proves that the Swift binary, libcurl,
SQLite and Dispatch work under MemoryDenyWriteExecute=, SystemCallFilter= and the Protect* family.
Nothing is skipped: if systemd cannot boot, the test fails with its console log.
"""
import json
import os
import pwd
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import POSTS, ROOT, wait_for

SOCKET = "/run/syncd/io.syncd.Manager"
HOST_PATHS = ["/usr/bin/syncd", "/usr/bin/syncctl", "/usr/lib/systemd/system/syncd.service",
              "/usr/lib/sysusers.d/syncd.conf", "/etc/syncd", "/var/lib/syncd", "/var/cache/syncd", "/home/syncdtest"]

BOOT = r"""
set -eu
for d in usr etc var; do
    lower=/$d
    if [ -d "$DEST/$d" ]; then lower="$DEST/$d:/$d"; fi
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$WORK/upper/$d,workdir=$WORK/work/$d" /$d
done
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
umount -R /sys/fs/cgroup 2>/dev/null || true
mount --bind /sys /sys
mount -o remount,bind,ro /sys
mount -t cgroup2 cgroup2 /sys/fs/cgroup
exec /lib/systemd/systemd --system --log-target=console
"""


def cgroup2_base():
    """Where this process's cgroup2 directory is: the cgroup2 mount point plus our path in it."""
    mount = None
    with open("/proc/self/mountinfo") as info:
        for line in info:
            fields = line.split()
            fstype = fields[fields.index("-") + 1]
            if fstype == "cgroup2":
                mount = fields[4]
                break
    if mount is None:
        pytest.fail("no cgroup2 hierarchy is mounted; the namespaced systemd needs one")
    own = next((line.split(":", 2)[2].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                if line.startswith("0::")), "/")
    return Path(mount + own)


def remove_cgroup(path, timeout=10.0):
    """rmdir a cgroup tree bottom-up, waiting for killed processes to leave it."""
    deadline = time.monotonic() + timeout
    while path.exists():
        try:
            for directory in sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                directory.rmdir()
            path.rmdir()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def host_view():
    """What the host sees of syncd: its paths and its user. Must not change because of the test."""
    paths = {p: os.path.lexists(p) for p in HOST_PATHS}
    users = {}
    for name in ("syncd", "syncdtest"):
        try:
            users[name] = pwd.getpwnam(name).pw_uid
        except KeyError:
            users[name] = None
    return paths, users


class NamespacedSystemd:
    def __init__(self, workdir, dest):
        self.workdir = Path(workdir)
        for layer in ("upper", "work"):
            for d in ("usr", "etc", "var"):
                (self.workdir / layer / d).mkdir(parents=True)
        self.log_path = self.workdir / "systemd-console.log"
        self.cgroup = cgroup2_base() / f"syncd-test-{os.getpid()}-{time.monotonic_ns()}"
        self.cgroup.mkdir()
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "container": "syncd-test",
               "DEST": str(dest), "WORK": str(self.workdir), "BOOT": BOOT, "CGROUP": str(self.cgroup)}
        # The shell joins the test's cgroup first, so the new cgroup namespace is rooted there.
        command = ('echo $$ > "$CGROUP/cgroup.procs" && exec unshare --cgroup --pid --fork --mount '
                   '--mount-proc --uts --propagation private sh -c "$BOOT"')
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(["sh", "-c", command], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
        self.pid = None
        try:
            self.pid = wait_for(self._find_systemd, timeout=15, what="the namespaced systemd to start")
            wait_for(self._booted, timeout=90, what="the namespaced systemd to finish booting")
        except AssertionError as error:
            self.close()
            pytest.fail(f"systemd did not boot in the namespace: {error}\n{self.console()}")

    def console(self):
        return self.log_path.read_text(errors="replace")[-6000:]

    def _find_systemd(self):
        """The host PID of the namespace's PID 1: the child of `unshare --fork` once it exec'd systemd."""
        if self.proc.poll() is not None:
            raise AssertionError(f"unshare exited with {self.proc.returncode}")
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                if parent == self.proc.pid and (entry / "exe").resolve().name == "systemd":
                    return int(entry.name)
            except (OSError, ValueError, IndexError):
                pass
        return None

    def _booted(self):
        state = self.run("systemctl", "is-system-running", check=False).stdout.strip()
        if state == "degraded":
            failed = self.run("systemctl", "--failed", "--no-legend", check=False).stdout
            raise AssertionError(f"systemd is degraded; failed units:\n{failed}")
        return state == "running"

    def run(self, *args, check=True, input=None, timeout=60):
        """Runs a command inside the namespaces (mount, PID, UTS) of the namespaced systemd."""
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "SYSTEMD_PAGER": "",
               "SYSTEMD_COLORS": "0"}
        result = subprocess.run(["nsenter", "-t", str(self.pid), "-m", "-p", "-u", *map(str, args)],
                                capture_output=True, text=True, input=input, env=env, timeout=timeout)
        if check:
            assert result.returncode == 0, f"{' '.join(map(str, args))}: exit {result.returncode}\n" \
                                           f"{result.stdout}{result.stderr}"
        return result

    def write(self, path, text):
        self.run("sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", path, input=text)

    def show(self, unit, *properties):
        output = self.run("systemctl", "show", unit, "-p", ",".join(properties)).stdout
        return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)

    def journal(self, unit):
        return self.run("journalctl", "-u", unit, "-o", "cat", "--no-pager").stdout

    def close(self):
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)   # PID 1 of the namespace: takes all its processes along
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        remove_cgroup(self.cgroup)


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
def systemd(tmp_path, installed_root):
    before = host_view()
    sd = NamespacedSystemd(tmp_path / "ns", installed_root)
    yield sd
    sd.close()
    assert host_view() == before, "the test changed the host's /usr, /etc or /var"


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
