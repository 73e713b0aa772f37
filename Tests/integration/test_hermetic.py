"""The test suite runs from any checkout: a clone below a 0700 directory (/root, a home made by adduser) included.

Every test that runs a program as another user goes through one helper (another_user.py, the `another_user`
fixture; `runAsAnotherUser` in the Swift tests), which copies what that user runs to a folder the user can
reach. This file fails the suite when a test switches user any other way, and checks that the tests which do
are the ones `.ci/contributor-machine` reruns from below a 0700 directory (selected by marker, not by a list)."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, HERE, ROOT

PYTHON_HELPER = HERE / "another_user.py"
SWIFT_HELPER = ROOT / "Tests" / "SyncControlTests" / "ProcessRunner.swift"
ADVICE = ("runs a program as another user without the helper: take the another_user fixture "
          "(Tests/integration/another_user.py) in Python, or call runAsAnotherUser "
          "(Tests/SyncControlTests/ProcessRunner.swift) in Swift; it copies what that user runs to a folder "
          "the user can reach, as the checkout may lie below a 0700 directory")

SWITCHING_PROGRAMS = {"runuser", "setpriv", "su", "sudo", "chroot"}
SWITCHING_CALLS = {"setuid", "seteuid", "setreuid", "setresuid", "setgid", "setegid", "setregid", "setresgid",
                   "setgroups", "initgroups"}
SUBPROCESS_SWITCHES = {"user", "group", "extra_groups"}
SHELL_WORD = re.compile(r"(^|[\s;&|(`'\"])(/\S*/)?(runuser|setpriv|sudo|su)(\s|$)")


def _docstrings(tree):
    """The string constants that are docstrings (they may name runuser in prose)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def python_violations(text, name="<text>"):
    """`name:line: …` for each place in Python source `text` that switches user."""
    tree = ast.parse(text, filename=name)
    docstrings = _docstrings(tree)
    problems = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            value = node.value
            if os.path.basename(value) in SWITCHING_PROGRAMS or SHELL_WORD.search(value):
                problems.append(f"{name}:{line}: {value!r} {ADVICE}")
        elif isinstance(node, ast.Attribute) and node.attr in SWITCHING_CALLS:
            problems.append(f"{name}:{line}: {node.attr} {ADVICE}")
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in SUBPROCESS_SWITCHES and isinstance(node.func, ast.Attribute) \
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess":
                    problems.append(f"{name}:{line}: subprocess {keyword.arg}= {ADVICE}")
    return problems


SWIFT_SWITCH = re.compile(r'"(/\S*/)?(runuser|setpriv|su|sudo)"|\b(setuid|seteuid|setreuid|setresuid|setgid|setgroups)\s*\(')


def swift_violations(text, name="<text>"):
    """`name:line: …` for each line of Swift source `text` (comments aside) that switches user."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("//") and SWIFT_SWITCH.search(line):
            problems.append(f"{name}:{number}: {line.strip()} {ADVICE}")
    return problems


def suite_violations():
    problems = []
    for path in sorted(HERE.rglob("*.py")):
        # The helper, and this file's own examples of what it refuses.
        if path not in (PYTHON_HELPER, Path(__file__).resolve()) and "__pycache__" not in path.parts:
            problems += python_violations(path.read_text(), str(path.relative_to(ROOT)))
    for path in sorted((ROOT / "Tests").rglob("*.swift")):
        if path != SWIFT_HELPER:
            problems += swift_violations(path.read_text(), str(path.relative_to(ROOT)))
    return problems


def test_every_test_switches_user_through_the_helper():
    problems = suite_violations()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", [
    'subprocess.run(["runuser", "-u", "nobody", "--", str(BIN / "syncctl"), "status"])',
    'subprocess.run([shutil.which("setpriv"), "--reuid=61000", "/x/.build/debug/syncctl"])',
    'subprocess.run("/usr/sbin/runuser -u nobody -- .build/debug/syncctl status", shell=True)',
    'subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c", "syncctl"])',
    'subprocess.Popen([BIN / "syncd"], preexec_fn=lambda: os.setuid(65534))',
    'subprocess.run([BIN / "syncctl"], user="nobody")',
])
def test_a_test_that_switches_user_by_hand_is_named_with_the_helper_to_use(source):
    problems = python_violations(source, "test_new.py")
    assert len(problems) == 1, problems
    assert problems[0].startswith("test_new.py:1: ") and "another_user fixture" in problems[0]


@pytest.mark.parametrize("source", [
    'try runProcess("/usr/sbin/runuser", ["-u", "nobody", "--", binary])',
    'let status = setuid(65534)',
])
def test_a_swift_test_that_switches_user_by_hand_is_named_with_the_helper_to_use(source):
    problems = swift_violations("// a comment naming runuser is fine\n" + source, "New.swift")
    assert len(problems) == 1 and problems[0].startswith("New.swift:2: ") and "runAsAnotherUser" in problems[0], problems


def test_prose_and_other_programs_are_not_taken_for_a_user_switch():
    source = '"""Runs syncctl as nobody (runuser), from a folder of its own."""\n' \
             'subprocess.run(["ip", "netns", "exec", "ns", "curl", "--user-agent", "x"])\n' \
             'subprocess.Popen(["syncd"], preexec_fn=lambda: os.nice(5))\n'
    assert python_violations(source) == []


def test_the_helper_refuses_a_file_another_user_cannot_reach(another_user, tmp_path):
    private = tmp_path / "syncd.conf"
    private.write_text("[Daemon]\n")
    with pytest.raises(ValueError, match=r"lies outside .* another_user.file"):
        another_user.command([BIN / "syncd", "--check-config", f"--config-dir={tmp_path}"], user="nobody")
    # What the helper copies, the other user can run: syncctl's own copy, not the checkout's.
    r = another_user.run([BIN / "syncctl", "--version"], user="nobody", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("syncctl "), (r.stdout, r.stderr)
    assert (another_user.folder / "syncctl").is_file()


def test_the_contributor_check_reruns_every_test_that_switches_user_or_boots_systemd():
    """`.ci/contributor-machine` selects by marker; the markers come from the fixtures a test takes."""
    def collected(marker):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-m", marker],
                           cwd=HERE, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return {line.split("[")[0] for line in r.stdout.splitlines() if "::" in line}

    switching = collected("switches_user")
    assert {"test_syncctl.py::test_unprivileged_user_may_read_status_only",
            "test_daemon_lifecycle.py::test_a_lock_file_its_owner_cannot_write_gets_its_mode_back",
            "test_daemon_control_limits.py::test_idle_connections_of_one_user_never_lock_root_out_and_are_closed_after_the_timeouts",
            "test_hermetic.py::test_the_helper_refuses_a_file_another_user_cannot_reach"} <= switching, switching
    assert "test_syncctl.py::test_status_json_matches_the_spec_shape" not in switching
    host = collected("host_machine")
    assert {"test_systemd.py::test_system_unit_runs_hardened_under_systemd",
            "test_deb.py::test_install_upgrade_and_purge_under_systemd"} <= host, host
    assert not host & {"test_syncctl.py::test_status_json_matches_the_spec_shape"}
    script = (ROOT / ".ci" / "contributor-machine").read_text()
    assert "-m switches_user" in script and "-m host_machine" in script
