"""Packaging: the systemd units, the sysusers.d entry, the man pages and `make install`/`uninstall`.

Everything here runs the real tools (systemd-analyze, systemd-sysusers, scdoc, make, ldd) on the files
in the tree; nothing is installed outside a temporary DESTDIR.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGING = ROOT / "packaging" / "systemd"
RELEASE = ROOT / ".build" / "release"
# The man pages the product ships: one per binary, one for the configuration files, one for the cache files apps read.
MAN_PAGES = {"syncd.8", "syncctl.1", "syncd.conf.5", "syncd.cache.5"}
# The documents rendered as pages of section 7 by `make man` (packaging/man/md2scdoc).
SECTION_7 = {"syncd.local-changes.7", "syncd.control.7"}
# What a manual page must not name: a file of the source tree, which users do not have.
# man(1) in a UTF-8 locale (the pages use "…" and "→"), wide enough that no path is hyphenated.
MAN_ENV = {"MANWIDTH": "200", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
REPOSITORY_PATH = re.compile(r"(?<![\w./~-])(?:docs|Sources|Tests|bench|packaging|config)/|\.md\b|\.swift\b|\.py\b")


def run(*cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def release():
    """The release binaries (`make release`; quick when they are up to date)."""
    result = run("make", "-C", ROOT, "release", timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    return RELEASE


def unit_copy(tmp_path, template, name, bindir):
    """A copy of a unit template with @BINDIR@ replaced, as `make install` does.

    The raw templates cannot be analysed directly: `ExecStart=@BINDIR@/syncd` reads as the `@` prefix
    (argv[0] override) followed by a relative path, which systemd rejects."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    target = tmp_path / name
    target.write_text((PACKAGING / template).read_text().replace("@BINDIR@", str(bindir)))
    return target


def exposure(output):
    match = re.search(r"Overall exposure level for syncd\.service: (\d+(?:\.\d+)?)", output)
    assert match, f"no overall exposure in systemd-analyze output:\n{output}"
    return float(match.group(1))


def test_system_unit_exposure_is_at_most_1_5(tmp_path, release):
    unit = unit_copy(tmp_path / "system", "syncd.service", "syncd.service", release)
    result = run("systemd-analyze", "security", "--offline=true", "--no-pager", unit)
    assert result.returncode == 0, result.stdout + result.stderr
    score = exposure(result.stdout)
    assert score <= 1.5, result.stdout


def test_system_unit_keeps_the_settings_the_daemon_relies_on():
    text = (PACKAGING / "syncd.service").read_text()
    settings = {}
    for line in text.splitlines():
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    assert settings["Type"] == ["notify"]
    assert settings["NotifyAccess"] == ["main"]
    assert settings["ExecStart"] == ["@BINDIR@/syncd"]
    assert settings["ExecReload"] == ["@BINDIR@/syncctl reload"]
    assert settings["User"] == ["syncd"] and settings["Group"] == ["syncd"]
    # A static user, never a dynamic one, and the real peer credentials on the control socket.
    assert "DynamicUser" not in settings and "PrivateUsers" not in settings
    # It must reach whatever servers its sources name.
    assert "IPAddressDeny" not in settings and "PrivateNetwork" not in settings
    assert settings["StateDirectory"] == ["syncd"] and settings["StateDirectoryMode"] == ["0700"]
    assert settings["CacheDirectory"] == ["syncd"] and settings["CacheDirectoryMode"] == ["0750"]
    assert settings["RuntimeDirectory"] == ["syncd"] and settings["RuntimeDirectoryMode"] == ["0755"]
    assert settings["RestrictAddressFamilies"] == ["AF_UNIX AF_NETLINK AF_INET AF_INET6"]
    assert settings["CapabilityBoundingSet"] == [""]
    assert "#LoadCredential=" in text
    # A configuration error at start (syncd(8) EXIT STATUS 78) leaves the unit failed; anything else restarts.
    assert settings["Restart"] == ["on-failure"] and settings["RestartPreventExitStatus"] == ["78"]


def test_user_unit_does_not_restart_into_a_configuration_error():
    lines = (PACKAGING / "syncd.user.service").read_text().splitlines()
    assert "Restart=on-failure" in lines and "RestartPreventExitStatus=78" in lines


def seconds(span):
    """A systemd time span as these units write it (systemd.time(7): "5s", "2min", "1min 30s") in seconds."""
    units = {"ms": 0.001, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+)\s*([a-z]*)", span)
    assert parts and "".join(n + u for n, u in parts) == span.replace(" ", ""), span
    return sum(int(number) * units[unit or "s"] for number, unit in parts)


def section_settings(text, section):
    body = text.split(f"[{section}]\n", 1)[1].split("\n[", 1)[0]
    return dict(line.split("=", 1) for line in body.splitlines() if line and not line.startswith("#"))


@pytest.mark.parametrize("template", ["syncd.service", "syncd.user.service"])
def test_unit_lands_in_failed_when_a_start_failure_repeats(template):
    """syncd(8) EXIT STATUS: a failure at start that is not EX_CONFIG (a read-only folder, systemd's 243/CREDENTIALS)
    is restarted, but StartLimitBurst= starts RestartSec= apart fit in StartLimitIntervalSec=, so the start limit is
    hit and the unit lands in failed; systemd's default 10 s interval would never be reached at RestartSec=5s."""
    text = (PACKAGING / template).read_text()
    unit, service = section_settings(text, "Unit"), section_settings(text, "Service")
    assert service["Restart"] == "on-failure" and service["RestartPreventExitStatus"] == "78"
    burst, interval = int(unit["StartLimitBurst"]), seconds(unit["StartLimitIntervalSec"])
    restart = seconds(service["RestartSec"])
    assert burst >= 2, "a single crash is restarted"
    assert restart * burst < interval, (restart, burst, interval)


def test_units_verify(tmp_path, release):
    system = unit_copy(tmp_path / "system", "syncd.service", "syncd.service", release)
    result = run("systemd-analyze", "verify", "--man=no", system)
    assert result.returncode == 0 and result.stderr == "", result.stderr

    user = unit_copy(tmp_path / "user", "syncd.user.service", "syncd.service", release)
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    result = run("systemd-analyze", "verify", "--user", "--man=no", user, env=env)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_user_unit_runs_in_user_mode_without_state_directory():
    text = (PACKAGING / "syncd.user.service").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert "ExecStart=@BINDIR@/syncd --user" in lines
    assert "ExecReload=@BINDIR@/syncctl --user reload" in lines
    assert "Type=notify" in lines
    # systemd 252 maps a user unit's StateDirectory= to ~/.config; syncd's XDG defaults are right instead.
    assert not any(line.startswith(("StateDirectory=", "CacheDirectory=")) for line in lines)


def test_sysusers_entry_creates_user_and_group(tmp_path):
    (tmp_path / "etc").mkdir()
    result = run("systemd-sysusers", f"--root={tmp_path}", PACKAGING / "syncd.sysusers")
    assert result.returncode == 0, result.stderr
    passwd = [line.split(":") for line in (tmp_path / "etc" / "passwd").read_text().splitlines()]
    group = [line.split(":") for line in (tmp_path / "etc" / "group").read_text().splitlines()]
    user = next(entry for entry in passwd if entry[0] == "syncd")
    syncd_group = next(entry for entry in group if entry[0] == "syncd")
    assert user[3] == syncd_group[2], "the user's primary group is group syncd"
    assert user[5] == "/var/lib/syncd"
    assert int(user[2]) < 1000, "a system user"


def test_every_man_page_renders():
    pages = sorted((ROOT / "docs").glob("*.[158].md"))
    assert {page.name[:-3] for page in pages} >= MAN_PAGES, f"man page sources in docs/: {pages}"
    for page in pages:
        with open(page) as source:
            result = subprocess.run(["scdoc"], stdin=source, capture_output=True, text=True)
        assert result.returncode == 0, f"{page.name}: {result.stderr}"
        assert result.stdout.startswith(".\\\" Generated by scdoc")


def test_syncd_man_page_lists_exactly_the_options_of_help(release):
    """Every option `syncd --help` prints is documented, and no other."""
    help_text = run(release / "syncd", "--help").stdout
    from_help = set(re.findall(r"^\s+(?:-\w, )?(--[a-z-]+)", help_text, re.MULTILINE))
    page = (ROOT / "docs" / "syncd.8.md").read_text()
    options = page.split("# OPTIONS", 1)[1].split("\n# ", 1)[0]
    terms = [line for line in options.splitlines() if line.startswith("*-")]
    from_page = {option for line in terms for option in re.findall(r"\*(--[a-z-]+)\*", line)}
    assert from_help and from_page == from_help


def test_make_man_renders_the_section_7_pages_and_refuses_repository_paths(tmp_path):
    result = run("make", "-C", ROOT, "man")
    assert result.returncode == 0, result.stdout + result.stderr
    rendered = {page.name for page in (ROOT / "build/man").iterdir()}
    assert rendered == {page.name[:-3] for page in (ROOT / "docs").glob("*.[158].md")} | SECTION_7, rendered
    for page in SECTION_7:
        text = run("man", "-l", "--warnings", ROOT / "build/man" / page, env=MAN_ENV)
        assert text.returncode == 0 and text.stderr == "" and not REPOSITORY_PATH.search(text.stdout), text.stderr
    # A document that would name a file of the tree is refused with the path named, and writes no page.
    bad = "# Title\n\nSee `Sources/SyncDaemon/Credentials.swift` and docs/architecture.md.\n"
    refused = run(ROOT / "packaging/man/md2scdoc", "syncd.x", "7", "x", input=bad)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == "md2scdoc: syncd.x(7) would name repository paths: Sources/SyncDaemon/Credentials.swift\n"


def installed_files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_install_and_uninstall(tmp_path, release):
    dest = tmp_path / "dest"
    result = run("make", "-C", ROOT, "install", f"DESTDIR={dest}", "PREFIX=/usr/local", timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr

    prefix = dest / "usr" / "local"
    expected = {
        "bin/syncd": 0o755,
        "bin/syncctl": 0o755,
        "lib/systemd/system/syncd.service": 0o644,
        "lib/systemd/user/syncd.service": 0o644,
        "lib/sysusers.d/syncd.conf": 0o644,
        "share/man/man8/syncd.8": 0o644,
        "share/man/man1/syncctl.1": 0o644,
        "share/man/man5/syncd.conf.5": 0o644,
        "share/man/man5/syncd.cache.5": 0o644,
        "share/syncd/cache.schema.json": 0o644,
        "share/doc/syncd/examples/follow-cache-file": 0o644,
        "share/doc/syncd/examples/follow-changes": 0o644,
        "share/man/man7/syncd.local-changes.7": 0o644,
        "share/man/man7/syncd.control.7": 0o644,
        # journalctl reads catalogs from /usr/local/lib/systemd/catalog too.
        "lib/systemd/catalog/syncd.catalog": 0o644,
        "share/doc/syncd/architecture.txt": 0o644,
        # syncd reads /etc/syncd whatever the prefix: the examples go where it looks.
        "/etc/syncd/syncd.conf.example": 0o644,
        "/etc/syncd/sources.d/posts.source.example": 0o644,
    }
    for path, mode in expected.items():
        target = dest / path.lstrip("/") if path.startswith("/") else prefix / path
        assert target.is_file(), f"{path} not installed; installed: {installed_files(dest)}"
        assert target.stat().st_mode & 0o7777 == mode, f"{path}: mode {oct(target.stat().st_mode & 0o7777)}"

    system_unit = (prefix / "lib/systemd/system/syncd.service").read_text()
    user_unit = (prefix / "lib/systemd/user/syncd.service").read_text()
    assert "@BINDIR@" not in system_unit + user_unit
    assert "ExecStart=/usr/local/bin/syncd\n" in system_unit
    assert "ExecReload=/usr/local/bin/syncctl reload\n" in system_unit
    assert "ExecStart=/usr/local/bin/syncd --user\n" in user_unit

    # Static Swift runtime: the installed binaries need nothing from the toolchain.
    for binary in ("syncd", "syncctl"):
        ldd = run("ldd", prefix / "bin" / binary)
        assert ldd.returncode == 0, ldd.stderr
        assert "not found" not in ldd.stdout, ldd.stdout
        for forbidden in ("/opt/swift", "libswift", "libFoundation", "libdispatch", "libBlocksRuntime"):
            assert forbidden not in ldd.stdout, f"{binary} links {forbidden}:\n{ldd.stdout}"
        assert run(prefix / "bin" / binary, "--help").returncode == 0

    # The pages name what this install put where: the example in /etc/syncd/sources.d, the design notes below PREFIX.
    for page in (prefix / "share/man").glob("man*/*"):
        text = run("man", "-l", page, env=MAN_ENV).stdout
        assert text and not REPOSITORY_PATH.search(text), f"{page.name}: {REPOSITORY_PATH.findall(text)}"
    # The design notes below a header: their paths are files of the source tree, the manual pages are for users.
    notes = (prefix / "share/doc/syncd/architecture.txt").read_text()
    header = (ROOT / "packaging/doc/architecture-header.txt").read_text()
    assert notes.startswith("syncd: design notes\n") and notes == header + (ROOT / "docs/architecture.md").read_text()
    assert "not of\nthis system" in header and "read the manual pages: syncd(8)" in header
    syncd8 = run("man", "-l", prefix / "share/man/man8/syncd.8", env=MAN_ENV).stdout
    assert "# cp /etc/syncd/sources.d/posts.source.example /etc/syncd/sources.d/posts.source" in syncd8
    assert "/usr/local/share/doc/syncd/architecture.txt" in syncd8 and "/usr/share/doc" not in syncd8

    result = run("make", "-C", ROOT, "uninstall", f"DESTDIR={dest}", "PREFIX=/usr/local")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed_files(dest) == []
