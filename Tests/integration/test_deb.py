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
                 "usr/share/man/man5/syncd.conf.5.gz", "usr/share/man/man5/syncd.cache.5.gz",
                 "usr/share/syncd/cache.schema.json", "usr/share/bash-completion/completions/syncctl",
                 "usr/share/doc/syncd/copyright", "usr/share/doc/syncd/examples/posts.source.example",
                 "usr/share/doc/syncd/examples/follow-cache-file", "usr/share/doc/syncd/examples/follow-changes",
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


def installed_package(package, tmp_path):
    """A namespaced systemd with the package installed (and its service running without sources)."""
    sd = NamespacedSystemd(tmp_path / "ns", files={"/var/tmp/syncd-test/syncd.deb": package})
    try:
        if sd.run("dpkg-query", "-W", "-f=${Status}", "syncd", check=False).stdout == "install ok installed":
            sd.run("dpkg", "--purge", "syncd", timeout=120)
        sd.run("dpkg", "-i", "/var/tmp/syncd-test/syncd.deb", timeout=300)
        assert sd.show("syncd", "ActiveState")["ActiveState"] == "active", sd.journal("syncd")
    except BaseException:
        sd.close()
        raise
    return sd


def status_text(sd):
    return sd.run("systemctl", "status", "syncd", "--no-pager", "-l", "-n", "20", check=False).stdout


def test_configuration_error_leaves_the_unit_failed_and_a_crash_restarts_it(package, server, tmp_path, host_unchanged):
    """syncd(8) EXIT STATUS 78: RestartPreventExitStatus= stops the restart loop on a configuration error; a SIGKILL
    of the main process is still restarted (Restart=on-failure)."""
    server.set_records("posts", POSTS)
    sd = installed_package(package, tmp_path)
    try:
        sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
        good = sd.run("cat", "/etc/syncd/syncd.conf").stdout
        sd.run("sh", "-c", "printf '[Daemon]\\nAccount=..\\n' >> /etc/syncd/syncd.conf")
        # The start fails (Type=notify: syncd exits before READY=1), so restart reports it.
        assert sd.run("systemctl", "restart", "syncd", check=False).returncode != 0
        wait_for(lambda: sd.run("systemctl", "is-failed", "syncd", check=False).stdout.strip() == "failed",
                 timeout=60, what=f"syncd.service to be failed\n{status_text(sd)}")
        state = sd.show("syncd", "ActiveState", "Result", "ExecMainStatus", "NRestarts")
        assert state == {"ActiveState": "failed", "Result": "exit-code", "ExecMainStatus": "78", "NRestarts": "0"}, state
        status = status_text(sd)
        assert 'Account: invalid account ".."' in status, status
        assert "Failed to load the configuration from /etc/syncd; fix it (see 'syncd --check-config')" in status, status
        assert "Main PID: " in status and "(code=exited, status=78" in status, status
        # It stays failed: no restart is scheduled.
        assert sd.show("syncd", "SubState")["SubState"] == "failed"
        # The cache of the good configuration is not touched by the refused start.
        assert not sd.exists(CACHE)

        # Fixed, it starts again; a crash (SIGKILL of the main process) is restarted.
        sd.write("/etc/syncd/syncd.conf", good)
        sd.run("systemctl", "restart", "syncd")
        wait_for(lambda: sd.exists(CACHE), timeout=30, what=f"{CACHE}\n{sd.journal('syncd')}")
        first = sd.show("syncd", "MainPID", "NRestarts")
        sd.run("kill", "-KILL", first["MainPID"])

        def restarted():
            now = sd.show("syncd", "ActiveState", "SubState", "MainPID", "NRestarts")
            return now if now["ActiveState"] == "active" and now["MainPID"] not in ("0", first["MainPID"]) else None
        after = wait_for(restarted, timeout=60, what=f"syncd to be restarted after SIGKILL\n{status_text(sd)}")
        assert (after["SubState"], after["NRestarts"]) == ("running", str(int(first["NRestarts"]) + 1)), after
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS
    finally:
        sd.close()


STATE_ELSEWHERE = "/etc/syncd/state"
READ_ONLY_ADVICE = ("under syncd.service only the unit's own StateDirectory=, CacheDirectory= and RuntimeDirectory= are "
                    f"writable (ProtectSystem=strict): add ReadWritePaths={STATE_ELSEWHERE} with 'systemctl edit syncd'")


def failed_for_good(sd):
    """The unit gave up: failed, no restart pending (between restarts it is activating/auto-restart)."""
    state = sd.show("syncd", "ActiveState", "SubState", "Result", "NRestarts", "ExecMainStatus")
    return state if (state["ActiveState"], state["SubState"]) == ("failed", "failed") else None


def test_a_failure_that_repeats_at_start_lands_the_unit_in_failed(package, server, tmp_path, host_unchanged):
    """syncd(8) EXIT STATUS: a failure at start other than EX_CONFIG is restarted only up to the start limit
    (StartLimitBurst= within StartLimitIntervalSec=), then the unit is failed, where `systemctl --failed` sees it: a
    StateDirectory= outside the sandbox (read-only under ProtectSystem=strict, with the ReadWritePaths= advice), and
    a LoadCredential= naming a missing file (systemd's 243/CREDENTIALS). The advice, followed, lets it start."""
    server.set_records("posts", POSTS)
    sd = installed_package(package, tmp_path)
    try:
        sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
        sd.run("systemctl", "reload", "syncd")
        wait_for(lambda: sd.exists(CACHE), timeout=30, what=f"{CACHE}\n{sd.journal('syncd')}")
        cached = sd.run("cat", CACHE).stdout
        good = sd.run("cat", "/etc/syncd/syncd.conf").stdout

        # The state moved to a folder of syncd's own, but outside what the unit may write: every start fails on the
        # lock file with EROFS (exit 1, not 78), is restarted, and the start limit ends it.
        sd.run("install", "-d", "-o", "syncd", "-g", "syncd", "-m", "0700", STATE_ELSEWHERE)
        sd.run("sh", "-c", f"printf '[Daemon]\\nStateDirectory={STATE_ELSEWHERE}\\n' >> /etc/syncd/syncd.conf")
        assert sd.run("systemctl", "restart", "syncd", check=False).returncode != 0
        state = wait_for(lambda: failed_for_good(sd), timeout=300, what=f"syncd.service to be failed\n{status_text(sd)}")
        # systemd 252 keeps the last exit's Result= when the start limit refuses the next automatic restart.
        assert (state["Result"], state["ExecMainStatus"]) == ("exit-code", "1"), state
        assert int(state["NRestarts"]) >= 1, state
        assert sd.run("systemctl", "--failed", "--no-legend", "--plain").stdout.split()[:1] == ["syncd.service"]
        message = f"Failed to start: open lock file {STATE_ELSEWHERE}/syncd.lock: Read-only file system; {READ_ONLY_ADVICE}"
        assert message in sd.journal("syncd"), sd.journal("syncd")
        # Nothing was written: not in the folder, not to the cache of the old state.
        assert sd.run("ls", "-A", STATE_ELSEWHERE).stdout == ""
        assert sd.run("cat", CACHE).stdout == cached

        # The advice followed: ReadWritePaths= in a drop-in, reset-failed, restart: it runs on the new state folder.
        sd.write("/etc/systemd/system/syncd.service.d/state.conf", f"[Service]\nReadWritePaths={STATE_ELSEWHERE}\n")
        sd.run("systemctl", "daemon-reload")
        sd.run("systemctl", "reset-failed", "syncd")
        sd.run("systemctl", "restart", "syncd")
        wait_for(lambda: sd.exists(f"{STATE_ELSEWHERE}/default/state.db"), timeout=30, what=sd.journal("syncd"))
        assert sd.show("syncd", "ActiveState")["ActiveState"] == "active"
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS

        # A LoadCredential= whose file is missing: systemd itself fails each start (243/CREDENTIALS) until the limit.
        sd.write("/etc/syncd/syncd.conf", good)
        sd.write(DROP_IN, "[Service]\nLoadCredential=posts-token:/etc/syncd/credentials/posts-token\n")
        sd.run("systemctl", "daemon-reload")
        assert sd.run("systemctl", "restart", "syncd", check=False).returncode != 0
        state = wait_for(lambda: failed_for_good(sd), timeout=300, what=f"syncd.service to be failed\n{status_text(sd)}")
        assert state["ExecMainStatus"] == "243", state
        assert int(state["NRestarts"]) >= 1, state
        assert "status=243/CREDENTIALS" in status_text(sd), status_text(sd)
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS
    finally:
        sd.close()


REFRESH_FAILED = "8a704ae683b94d20b280c348ce02a23f"


def test_journal_catalog_explains_a_failed_refresh(package, server, tmp_path, host_unchanged):
    """The package's catalog is compiled by systemd's dpkg trigger: journalctl -x shows it for MESSAGE_ID=refreshFailed."""
    server.set_records("posts", POSTS)
    server.fault("posts", kind="status", status=404)
    sd = installed_package(package, tmp_path)
    try:
        assert sd.exists("/usr/lib/systemd/catalog/syncd.catalog")
        catalog = sd.run("journalctl", "--list-catalog", "--no-pager").stdout
        for message_id in (REFRESH_FAILED, "9d06ba59b61e4ff89dbe4bc32504e50a", "00411ed163d948e1b0d9ddbd73b6a8ea"):
            assert message_id in catalog, catalog

        sd.write("/etc/syncd/sources.d/posts.source", f"[Source]\nURL={server.url('posts')}\n")
        sd.run("systemctl", "reload", "syncd")

        def explained():
            out = sd.run("journalctl", "-x", "-u", "syncd", f"MESSAGE_ID={REFRESH_FAILED}", "--no-pager", check=False).stdout
            return out if "A syncd source failed to refresh; its cached copy is kept" in out else None
        text = wait_for(explained, timeout=30, what=f"the catalog text in journalctl -x\n{sd.journal('syncd')}")
        assert "posts: " in text and "404" in text, text
        # The explanation names the source and what to do.
        assert "syncd could not refresh the source posts" in text, text
        assert "syncctl refresh posts" in text and "journalctl -u syncd SYNCD_SOURCE=posts" in text, text
        assert "syncctl status posts\n" in text, text
        assert not sd.exists(CACHE), "a 404 writes no cache file"
    finally:
        sd.close()


TOKEN = "t0ken-for-posts"
DROP_IN = "/etc/systemd/system/syncd.service.d/token.conf"


def test_load_credential_delivers_a_token_after_a_restart_and_a_reload_says_so(package, server, tmp_path, host_unchanged):
    """syncd(8) EXAMPLES: a token through LoadCredential= of the real systemd reaches the server, read by the unit's
    syncd user; added with only a reload, the journal and `systemctl status` say that a restart is needed."""
    server.set_records("posts", POSTS)
    sd = installed_package(package, tmp_path)
    try:
        source = f"[Source]\nURL={server.url('posts')}\n"
        sd.write("/etc/syncd/sources.d/posts.source", source)
        sd.run("systemctl", "reload", "syncd")
        wait_for(lambda: sd.exists(CACHE), timeout=30, what=f"{CACHE}\n{sd.journal('syncd')}")
        pid = sd.show("syncd", "MainPID")["MainPID"]

        # The source names a token systemd was never told about, and the admin reloads.
        sd.write("/etc/syncd/sources.d/posts.source", source + "BearerTokenCredential=posts-token\n")
        server.clear_requests()
        sd.run("systemctl", "reload", "syncd")
        # The restart first (the admin may well have added LoadCredential= already), then how to add it if not.
        advice = "credentials are read when syncd starts, so a restart is needed: run 'systemctl restart syncd' " \
                 "('systemctl --user restart syncd' for a user's own); a reload does not pass new credentials. " \
                 "If the unit does not load it yet ('systemctl cat syncd' shows no LoadCredential=posts-token:), " \
                 "first add LoadCredential=posts-token:/path/to/token to it with 'systemctl edit syncd'"
        warning = f"posts: BearerTokenCredential=posts-token was not passed by systemd; {advice}"
        failure = f"posts: refresh failed, serving the cached copy: BearerTokenCredential=posts-token is set but " \
                  f"systemd passed no credentials ($CREDENTIALS_DIRECTORY is not set); {advice}"
        wait_for(lambda: failure in sd.journal("syncd"), timeout=30, what=f"the refresh's failure\n{sd.journal('syncd')}")
        assert sd.journal("syncd").count(warning) == 1, sd.journal("syncd")

        # Then adds the token as systemctl edit would (a root-only file, LoadCredential= in a drop-in) and only
        # reloads: the credential is still not there, and the reload says at once that a restart is needed.
        sd.run("sh", "-c", f"install -d -m 0700 /etc/syncd/credentials && umask 077 && echo {TOKEN} > /etc/syncd/credentials/posts-token")
        sd.write(DROP_IN, "[Service]\nLoadCredential=posts-token:/etc/syncd/credentials/posts-token\n")
        sd.run("systemctl", "daemon-reload")
        sd.run("systemctl", "reload", "syncd")
        wait_for(lambda: sd.journal("syncd").count(warning) == 2, timeout=30,
                 what=f"the reload's restart advice\n{sd.journal('syncd')}")
        journal = sd.journal("syncd")
        assert warning in status_text(sd), status_text(sd)
        by_source = sd.run("journalctl", "-u", "syncd", "SYNCD_SOURCE=posts", "-o", "cat", "--no-pager").stdout
        assert warning in by_source and failure in by_source, by_source
        assert TOKEN not in journal
        # Nothing reached the server without the token, the process is the same, and the cache is kept.
        assert all("authorization" not in r["headers"] for r in server.requests("/posts"))
        assert sd.show("syncd", "MainPID")["MainPID"] == pid
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS

        # A restart passes the credential: the syncd user reads it from $CREDENTIALS_DIRECTORY and sends it.
        sd.run("systemctl", "restart", "syncd")
        main = sd.show("syncd", "MainPID")["MainPID"]
        assert sd.run("ps", "-o", "user=", "-p", main).stdout.strip() == "syncd"
        assert sd.run("stat", "-c", "%U %a", "/etc/syncd/credentials/posts-token").stdout.split() == ["root", "600"]
        # systemd's copy: on its own read-only file system, readable by the unit's user only.
        assert sd.run("findmnt", "-n", "-o", "FSTYPE", "/run/credentials/syncd.service").stdout.strip() == "ramfs"
        assert sd.run("stat", "-c", "%U %a", "/run/credentials/syncd.service/posts-token").stdout.split() == ["syncd", "400"]

        def authorized():
            return [r for r in server.requests("/posts") if r["headers"].get("authorization") == f"Bearer {TOKEN}"]
        wait_for(authorized, timeout=30, what=f"the token at the server\n{sd.journal('syncd')}")
        assert json.loads(sd.run("cat", CACHE).stdout)["records"] == POSTS
    finally:
        sd.close()


# What a manual page must not name: a file of the source tree, which users do not have.
REPOSITORY_PATH = re.compile(r"(?<![\w./~-])(?:docs|Sources|Tests|bench|packaging|config)/|\.md\b|\.swift\b|\.py\b")
# Paths of the package that the pages point users to.
PACKAGE_PATH = re.compile(r"(/usr/share/doc/syncd/[\w./-]*\w|/usr/share/syncd/[\w./-]*\w|/usr/lib/systemd/catalog/[\w.-]*\w)")


def rendered(page):
    result = run("man", "-l", "--warnings", page, env={"MANWIDTH": "200", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert result.returncode == 0 and result.stderr == "", f"{page}: {result.stderr}"
    return result.stdout


def test_every_packaged_man_page_stands_on_its_own(package, tmp_path):
    """No page names a file of the repository; every file of the package a page names is in the package
    (the local-changes rules and the control API are pages of section 7, the design notes a text file)."""
    root = tmp_path / "root"
    run("dpkg-deb", "-x", package, root, check=True)
    pages = sorted((root / "usr/share/man").glob("man*/*.gz"))
    assert {page.name for page in pages} == {"syncd.8.gz", "syncctl.1.gz", "syncd.conf.5.gz", "syncd.cache.5.gz",
                                             "syncd.local-changes.7.gz", "syncd.control.7.gz"}, pages
    named = set()
    for page in pages:
        text = rendered(page)
        assert not REPOSITORY_PATH.search(text), f"{page.name}: {REPOSITORY_PATH.findall(text)}"
        named |= set(PACKAGE_PATH.findall(text))
        for other in re.findall(r"\b(syncd(?:\.[\w-]+)?|syncctl)\((\d)\)", text):
            assert (root / f"usr/share/man/man{other[1]}/{other[0]}.{other[1]}.gz").is_file(), f"{page.name}: {other}"
    assert named == {"/usr/share/doc/syncd/examples/posts.source.example", "/usr/share/doc/syncd/architecture.txt",
                     "/usr/lib/systemd/catalog/syncd.catalog", "/usr/share/syncd/cache.schema.json",
                     "/usr/share/doc/syncd/examples/follow-cache-file", "/usr/share/doc/syncd/examples/follow-changes"}, named
    for path in named:
        assert (root / path.lstrip("/")).is_file(), path
    syncd8 = rendered(root / "usr/share/man/man8/syncd.8.gz")
    # The example is copied from where the package puts it; the per-user recipe is in syncd(8).
    assert "# cp /usr/share/doc/syncd/examples/posts.source.example /etc/syncd/sources.d/posts.source" in syncd8
    assert "$ systemctl --user enable --now syncd" in syncd8 and "$XDG_CONFIG_HOME/syncd/" in syncd8
    assert "# systemctl restart syncd" in syncd8 and "78" in syncd8
    assert "DETAILS OF THE CALLS" in rendered(root / "usr/share/man/man7/syncd.control.7.gz")
    assert "CONFLICTS" in rendered(root / "usr/share/man/man7/syncd.local-changes.7.gz")
    # The design notes are not compressed: the pages name them by this name. They start with a header that says the
    # paths they name are files of the source tree, not of this system, and points users to the manual pages.
    notes = (root / "usr/share/doc/syncd/architecture.txt").read_text()
    assert notes.startswith("syncd: design notes\n===================\n\nThese are the design notes of syncd's source tree "
                            "(the file docs/architecture.md of the\nsource package)"), notes[:600]
    header, _, body = notes.partition("-" * 90 + "\n\n")
    assert "is a file of that source tree, not of\nthis system" in header and "syncd(8), syncd.conf(5), syncctl(1)" in header
    assert body == (ROOT / "docs/architecture.md").read_text()
    for page in ("syncd.8.gz", "syncd.local-changes.7.gz"):
        text = rendered(next(p for p in pages if p.name == page))
        words = " ".join(re.sub(r"\u2010\n\s*", "", text).split())  # joined lines, man's hyphenations undone
        assert "/usr/share/doc/syncd/architecture.txt" in text and "files of that source tree, not of this system" in words, page
    assert (root / "usr/lib/systemd/catalog/syncd.catalog").read_text() == \
        (ROOT / "packaging/systemd/syncd.catalog").read_text()


def test_binaries_have_full_relro_and_lintian_reports_no_hardening_tag(package, tmp_path):
    """Release binaries are linked with -z relro -z now (Makefile RELEASE_FLAGS), as Debian's hardened daemons."""
    root = tmp_path / "root"
    run("dpkg-deb", "-x", package, root, check=True)
    for binary in ("syncd", "syncctl"):
        dynamic = run("readelf", "-d", "-W", root / "usr/bin" / binary, check=True).stdout
        assert re.search(r"\(FLAGS\)\s+BIND_NOW", dynamic), dynamic
        assert re.search(r"\(FLAGS_1\)\s+Flags: NOW", dynamic), dynamic
        segments = run("readelf", "-l", "-W", root / "usr/bin" / binary, check=True).stdout
        assert re.search(r"^\s+GNU_RELRO\s", segments, re.MULTILINE), segments
    # No hardening tag, even at info level; the one that cannot apply to Swift code is overridden with the
    # reason (packaging/debian/syncd.lintian-overrides), and no-bindnow is gone, not overridden.
    lintian = run("lintian", "--display-info", "--show-overrides", "--tag-display-limit", "0", package, timeout=600)
    assert lintian.returncode == 0, lintian.stdout + lintian.stderr
    hardening = sorted(line for line in lintian.stdout.splitlines() if "hardening-" in line)
    assert hardening == ["O: syncd: hardening-no-fortify-functions [usr/bin/syncctl]",
                         "O: syncd: hardening-no-fortify-functions [usr/bin/syncd]"], lintian.stdout
