"""A real systemd (252 here) booted in its own PID, mount, UTS and cgroup namespaces, for the tests of the
unit (test_systemd.py) and of the Debian package (test_deb.py).

How the host is kept out of it:

* systemd boots with `unshare --cgroup --pid --fork --mount --mount-proc --uts`. Before it is exec'd,
  a shell inside the new mount namespace (private propagation, so nothing leaks back) mounts:
  - overlayfs on /usr, /etc, /var and /home with three lower layers, top first: an optional installed tree
    (`make install DESTDIR=…`), a mask layer made by the test, and the host's own directory; the upper
    layers are temp directories, so every write (passwd, machine-id, journal, dpkg's database,
    /var/lib/syncd, /var/cache/syncd, the test user's home) lands in <tmp>/upper, never on the host; a
    checkout in a home directory stays visible (and what a test builds there lands in the upper layer);
  - the mask layer holds overlayfs whiteouts (character devices 0/0) for /etc/syncd, /var/lib/syncd,
    /var/cache/syncd, /usr/sbin/policy-rc.d and the host's enabled services (the .wants folders of
    /etc/systemd/system): whatever a contributor's machine holds there (an installed syncd's
    configuration, state and cache; a container's policy-rc.d that forbids starting services; an
    nginx that would compete for the host's ports) is invisible, so every test starts from no syncd
    at all. The syncd user may or may not
    exist on the host; the tests look it up instead of assuming either;
  - tmpfs on /run and /tmp (systemd's sockets, PrivateTmp=); a checkout below either is bound back at
    its own path (test_deb.py runs `make install` from it inside);
  - /proc/sys and /sys read-only (as container managers do), so neither systemd nor
    systemd-sysctl.service can change the host kernel's settings; `container=syncd-test` tells
    systemd it runs in a container, so it skips module loading and the like;
  - a fresh cgroup2 hierarchy whose root is a cgroup made for this test (joined before unsharing the
    cgroup namespace), so systemd's slices and scopes live below it and not in the host's tree.
* Teardown kills that systemd (PID 1 of the namespace, by its host PID), which takes every process of
  the namespace and with them the mount namespace and its mounts; then the test's cgroup is removed.
  `host_view()` before and after shows that the host's syncd paths, their contents and its users are
  the same.

Nothing is skipped: if systemd cannot boot, the test fails with its console log.
"""
import hashlib
import os
import pwd
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, wait_for

# What the namespaced systemd must never see of the host: syncd's own paths, a container's policy-rc.d,
# and the services the host's admin enabled (nginx, PostgreSQL, …): the namespace shares the host's
# network, so a second copy would fight the host's over its ports, fail and leave systemd degraded.
HIDDEN = ["/etc/syncd", "/var/lib/syncd", "/var/cache/syncd", "/usr/sbin/policy-rc.d"] + \
    [f"/etc/systemd/system/{target}.target.wants" for target in ("multi-user", "graphical", "sockets", "timers")]
HOST_PATHS = ["/usr/bin/syncd", "/usr/bin/syncctl", "/usr/lib/systemd/system/syncd.service",
              "/lib/systemd/system/syncd.service", "/usr/lib/sysusers.d/syncd.conf", "/etc/syncd",
              "/var/lib/syncd", "/var/cache/syncd", "/home/syncdtest", "/usr/sbin/policy-rc.d"]

LAYERED = ("usr", "etc", "var", "home")

BOOT = r"""
set -eu
for d in usr etc var home; do
    lower="$WORK/mask/$d:/$d"
    if [ -n "$DEST" ] && [ -d "$DEST/$d" ]; then lower="$DEST/$d:$lower"; fi
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$WORK/upper/$d,workdir=$WORK/work/$d" /$d
done
# A checkout below /tmp or /run (a CI clone may lie there) stays visible at its own path: it is held on a
# mount point in /var's overlay while the fresh tmpfs mounts cover the host's folders, then moved back.
case "$CHECKOUT" in
    /tmp/*|/run/*) held=/var/.syncd-test-checkout
                   mkdir -p "$held"
                   mount --bind "$CHECKOUT" "$held" ;;
    *) held= ;;
esac
mount -t tmpfs -o mode=0755 tmpfs /run
# /run is shared within the namespace, as systemd makes every mount on a real boot (it skips that in a
# container): LoadCredential= prepares each unit's credentials in a helper's own mount namespace and moves
# them onto /run/credentials/UNIT, which PID 1 and the service only see through /run's propagation.  The
# host's mounts are private to this namespace (unshare --propagation private), so none of this reaches them.
mount --make-shared /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
if [ -n "$held" ]; then
    mkdir -p "$CHECKOUT"
    mount --move "$held" "$CHECKOUT"
fi
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


def tree(path):
    """Every entry below `path` with its type, mode and owner; file contents only in /etc (an installed
    syncd may legitimately refresh its own cache while the tests run, but never gains or loses files
    because of them)."""
    entries = {}
    for entry in sorted(Path(path).rglob("*")) if os.path.isdir(path) else []:
        info = entry.lstat()
        digest = None
        if stat.S_ISREG(info.st_mode) and path.startswith("/etc/"):
            digest = hashlib.sha256(entry.read_bytes()).hexdigest()
        entries[str(entry)] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid, digest)
    return entries


def host_view():
    """What the host sees of syncd: its paths, what they hold, its users. Must not change because of a test."""
    paths = {p: os.path.lexists(p) for p in HOST_PATHS}
    contents = {p: tree(p) for p in ("/etc/syncd", "/var/lib/syncd", "/var/cache/syncd")}
    users = {}
    for name in ("syncd", "syncdtest"):
        try:
            users[name] = pwd.getpwnam(name).pw_uid
        except KeyError:
            users[name] = None
    return paths, contents, users


def make_mask(root):
    """The mask layer: a whiteout for each HIDDEN path, below directories that merge with the host's."""
    for d in LAYERED:
        (root / d).mkdir(parents=True)
    for hidden in HIDDEN:
        target = root / hidden.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(0, 0))


class NamespacedSystemd:
    """`dest`: an installed tree laid over the host's directories; `files`: {path inside: host file}
    copied into the upper layers before boot (e.g. packages for dpkg: /tmp is a fresh tmpfs inside)."""

    def __init__(self, workdir, dest=None, files=None):
        self.workdir = Path(workdir)
        for layer in ("upper", "work"):
            for d in LAYERED:
                (self.workdir / layer / d).mkdir(parents=True)
        make_mask(self.workdir / "mask")
        for inside, source in (files or {}).items():
            top = inside.strip("/").split("/", 1)[0]
            assert top in LAYERED, f"{inside} is not below /{', /'.join(LAYERED)}"
            target = self.workdir / "upper" / inside.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        self.log_path = self.workdir / "systemd-console.log"
        self.cgroup = cgroup2_base() / f"syncd-test-{os.getpid()}-{time.monotonic_ns()}"
        self.cgroup.mkdir()
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "container": "syncd-test",
               "DEST": str(dest or ""), "WORK": str(self.workdir), "CHECKOUT": str(ROOT), "BOOT": BOOT, "CGROUP": str(self.cgroup)}
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
                stat_line = (entry / "stat").read_text()
                parent = int(stat_line.rsplit(")", 1)[1].split()[1])
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

    def run(self, *args, check=True, input=None, timeout=60, env=None):
        """Runs a command inside the namespaces (mount, PID, UTS) of the namespaced systemd."""
        full_env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "SYSTEMD_PAGER": "",
                    "SYSTEMD_COLORS": "0"}
        full_env.update(env or {})
        result = subprocess.run(["nsenter", "-t", str(self.pid), "-m", "-p", "-u", *map(str, args)],
                                capture_output=True, text=True, input=input, env=full_env, timeout=timeout)
        if check:
            assert result.returncode == 0, f"{' '.join(map(str, args))}: exit {result.returncode}\n" \
                                           f"{result.stdout}{result.stderr}"
        return result

    def exists(self, path):
        return self.run("test", "-e", path, check=False).returncode == 0

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


@pytest.fixture
def host_unchanged():
    """Fails the test if the host's view of syncd changed while it ran."""
    before = host_view()
    yield
    assert host_view() == before, "the test changed the host's /usr, /etc or /var"
