"""The Debian package and `make install` on a real system: `make deb` (debhelper, lintian), then dpkg
installs, upgrades and purges it under a real systemd booted in namespaces (namespaced_systemd.py);
`make install` without DESTDIR, `systemctl enable --now syncd` and `make uninstall` likewise. Nothing is
installed on the host, and each test checks that the host's syncd paths and users are unchanged."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import POSTS, ROOT, wait_for
from namespaced_systemd import NamespacedSystemd, host_unchanged  # noqa: F401 (a fixture)

CACHE = "/var/cache/syncd/default/posts.json"
STATE = "/var/lib/syncd/default/state.db"
# The package's version (packaging/debian/changelog); the packaged binaries must report the same.
VERSION = re.match(r"syncd \(([^)]+)\)", (ROOT / "packaging/debian/changelog").read_text()).group(1)


def run(*cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def package():
    """`make deb`: build/syncd_VERSION_ARCH.deb, checked by lintian inside the target. With SYNCD_REUSE_DEB=1
    (`.ci/contributor-machine`, right after `make integration` built it) a package newer than the release
    binaries it holds is used as it is."""
    built = sorted((ROOT / "build").glob("syncd_*.deb"))
    release = ROOT / ".build" / "release" / "syncd"
    if os.environ.get("SYNCD_REUSE_DEB") == "1" and len(built) == 1 and release.exists() \
            and built[0].stat().st_mtime > release.stat().st_mtime:
        return built[0]
    result = run("make", "-C", ROOT, "deb", timeout=2400)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    assert not re.search(r"^E: ", output, re.MULTILINE), output[-8000:]
    debs = sorted((ROOT / "build").glob("syncd_*.deb"))
    assert len(debs) == 1, debs
    return debs[0]


def field(deb, name):
    return run("dpkg-deb", "-f", deb, name, check=True).stdout.strip()


def test_package_holds_what_an_admin_needs(package, tmp_path):
    assert field(package, "Package") == "syncd" and field(package, "Version") == VERSION
    depends = field(package, "Depends")
    # libcurl4 is loaded on demand (dlopen), so dpkg-shlibdeps cannot see it: the control file names it.
    for library in ("libc6", "libcurl4", "libsqlite3-0"):
        assert library in depends, depends
    # systemd is spoken to over its sockets (sd_notify, journald's native protocol): no libsystemd0.
    assert "libsystemd0" not in depends, depends
    root = tmp_path / "root"
    run("dpkg-deb", "-x", package, root, check=True)
    for path in ("usr/bin/syncd", "usr/bin/syncctl", "lib/systemd/system/syncd.service",
                 "usr/lib/systemd/user/syncd.service", "usr/lib/sysusers.d/syncd.conf",
                 "usr/share/man/man8/syncd.8.gz", "usr/share/man/man1/syncctl.1.gz",
                 "usr/share/man/man5/syncd.conf.5.gz", "usr/share/bash-completion/completions/syncctl",
                 "usr/share/doc/syncd/copyright", "usr/share/doc/syncd/examples/posts.source.example",
                 "etc/syncd/syncd.conf"):
        assert (root / path).is_file(), path
    assert (root / "etc/syncd/sources.d").is_dir()
    unit = (root / "lib/systemd/system/syncd.service").read_text()
    assert "ExecStart=/usr/bin/syncd\n" in unit and "ExecReload=/usr/bin/syncctl reload\n" in unit
    assert "ExecStart=/usr/bin/syncd --user\n" in (root / "usr/lib/systemd/user/syncd.service").read_text()
    copyright_file = (root / "usr/share/doc/syncd/copyright").read_text()
    assert copyright_file.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert "License: Apache-2.0" in copyright_file

    # The configuration is a conffile (dpkg keeps an admin's edits); the user comes from sysusers.d.
    control = tmp_path / "control"
    run("dpkg-deb", "-e", package, control, check=True)
    assert (control / "conffiles").read_text().split() == ["/etc/syncd/syncd.conf"]
    assert "systemd-sysusers" in (control / "postinst").read_text()

    # Release binaries: stripped (the symbols are in syncd-dbgsym), no Swift toolchain needed.
    dbgsym = sorted((ROOT / "build").glob(f"syncd-dbgsym_{VERSION}_*.deb"))
    assert len(dbgsym) == 1
    for binary in ("syncd", "syncctl"):
        sections = run("readelf", "-S", "-W", root / "usr/bin" / binary, check=True).stdout
        assert ".symtab" not in sections and ".debug_info" not in sections, binary
        # No run path: an installed binary looks for its libraries in the system's folders only, not in /usr/bin.
        dynamic = run("readelf", "-d", "-W", root / "usr/bin" / binary, check=True).stdout
        assert "RUNPATH" not in dynamic and "RPATH" not in dynamic, dynamic
        ldd = run("ldd", root / "usr/bin" / binary).stdout
        assert "not found" not in ldd and "/opt/swift" not in ldd and "libswift" not in ldd, ldd
        assert run(root / "usr/bin" / binary, "--version").stdout.split() == [binary, VERSION]


def bumped(package, tmp_path):
    """The same package with a higher version: what an upgrade from the archive looks like to dpkg."""
    tree = tmp_path / "bumped"
    run("dpkg-deb", "-R", package, tree, check=True)
    control = tree / "DEBIAN/control"
    control.write_text(re.sub(r"^Version: .*$", f"Version: {VERSION}+test1", control.read_text(), flags=re.M))
    target = tmp_path / f"syncd_{VERSION}+test1.deb"
    # gzip at level 1: a test artifact, built in a second instead of xz's half a minute on a busy machine.
    run("dpkg-deb", "-Zgzip", "-z1", "--build", tree, target, check=True)
    return target


def test_install_upgrade_and_purge_under_systemd(package, server, tmp_path, host_unchanged):
    server.set_records("posts", POSTS)
    debs = {"/var/tmp/syncd-test/syncd.deb": package,
            "/var/tmp/syncd-test/syncd-bumped.deb": bumped(package, tmp_path)}
    sd = NamespacedSystemd(tmp_path / "ns", files=debs)
    try:
        # A host with syncd installed shows it in dpkg's database: start from a system without it.
        if sd.run("dpkg-query", "-W", "-f=${Status}", "syncd", check=False).stdout == "install ok installed":
            sd.run("dpkg", "--purge", "syncd", timeout=120)

        # Installing creates the user, then enables and starts the service with no further command.
        sd.run("dpkg", "-i", "/var/tmp/syncd-test/syncd.deb", timeout=300)
        assert sd.run("getent", "passwd", "syncd").stdout.split(":")[5] == "/var/lib/syncd"
        assert sd.run("systemctl", "is-enabled", "syncd").stdout.strip() == "enabled"
        state = sd.show("syncd", "ActiveState", "SubState", "MainPID")
        assert (state["ActiveState"], state["SubState"]) == ("active", "running"), \
            f"{state}\n{sd.journal('syncd')}"

        # The admin adds a source and edits the conffile; the running service picks both up on reload.
        sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
        sd.run("sh", "-c", "printf '[Refresh]\\nIntervalSec=1h\\n' >> /etc/syncd/syncd.conf")
        edited = sd.run("cat", "/etc/syncd/syncd.conf").stdout
        sd.run("systemctl", "reload", "syncd")
        wait_for(lambda: sd.exists(CACHE), timeout=30, what=f"{CACHE}\n{sd.journal('syncd')}")
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS
        assert sd.exists(STATE)
        state_inode = sd.run("stat", "-c", "%i", STATE).stdout
        status = json.loads(sd.run("syncctl", "status", "--json").stdout)
        assert [source["name"] for source in status["sources"]] == ["posts"]

        # Upgrading restarts the service and keeps state, cache and the admin's configuration.
        server.fault("posts", kind="status", status=503)     # the cache must survive, not be refetched
        sd.run("dpkg", "-i", "/var/tmp/syncd-test/syncd-bumped.deb", timeout=300)
        assert sd.run("dpkg-query", "-W", "-f=${Version}", "syncd").stdout == f"{VERSION}+test1"
        upgraded = sd.show("syncd", "ActiveState", "MainPID")
        assert upgraded["ActiveState"] == "active" and upgraded["MainPID"] != state["MainPID"], upgraded
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS
        assert sd.run("stat", "-c", "%i", STATE).stdout == state_inode
        assert sd.run("cat", "/etc/syncd/syncd.conf").stdout == edited
        assert sd.exists("/etc/syncd/sources.d/posts.source")

        # Purging stops the service and removes state, cache and configuration.
        sd.run("dpkg", "--purge", "syncd", timeout=300)
        for path in ("/var/lib/syncd", "/var/cache/syncd", "/etc/syncd", "/usr/bin/syncd",
                     "/lib/systemd/system/syncd.service", "/run/syncd"):
            assert not sd.exists(path), path
        assert sd.run("pgrep", "-x", "syncd", check=False).returncode == 1
        assert sd.run("systemctl", "is-enabled", "syncd", check=False).stdout.strip() != "enabled"
    finally:
        sd.close()


def test_make_install_lets_enable_now_start_the_service(server, tmp_path, host_unchanged):
    """`make install` without DESTDIR on a system with systemd: the user exists afterwards, so
    `systemctl enable --now syncd` works (it failed with 217/USER); `make uninstall` undoes it."""
    server.set_records("posts", POSTS)
    sd = NamespacedSystemd(tmp_path / "ns")
    env = {"PATH": "/opt/swift/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}
    try:
        installed = sd.run("make", "-C", ROOT, "install", "PREFIX=/usr", env=env, timeout=1800)
        assert "systemctl enable --now syncd" in installed.stdout
        sd.run("getent", "passwd", "syncd")
        sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
        sd.run("systemctl", "enable", "--now", "syncd")
        assert sd.show("syncd", "ActiveState")["ActiveState"] == "active", sd.journal("syncd")
        wait_for(lambda: sd.exists(CACHE), timeout=30, what=f"{CACHE}\n{sd.journal('syncd')}")

        removed = sd.run("make", "-C", ROOT, "uninstall", "PREFIX=/usr", env=env, timeout=300)
        assert "systemctl --user disable --now syncd" in removed.stdout
        assert sd.show("syncd", "ActiveState")["ActiveState"] == "inactive"
        assert sd.run("systemctl", "is-enabled", "syncd", check=False).returncode != 0
        assert not sd.exists("/usr/bin/syncd") and not sd.exists("/usr/lib/systemd/system/syncd.service")
        assert sd.exists(CACHE), "make uninstall keeps the cache (it says how to remove it)"
    finally:
        sd.close()
