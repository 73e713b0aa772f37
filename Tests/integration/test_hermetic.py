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

from another_user import AnotherUser
from conftest import BIN, HERE, ROOT

PYTHON_HELPER = HERE / "another_user.py"
SWIFT_HELPER = ROOT / "Tests" / "SyncControlTests" / "ProcessRunner.swift"
ADVICE = ("runs a program as another user without the helper: take the another_user fixture "
          "(Tests/integration/another_user.py) in Python, or call runAsAnotherUser "
          "(Tests/SyncControlTests/ProcessRunner.swift) in Swift; it copies what that user runs to a folder "
          "the user can reach, as the checkout may lie below a 0700 directory")

# What switches user, as a program name or a word of a command line, and the options of otherwise harmless
# programs that do (start-stop-daemon --chuid, systemd-run --uid=, nsenter --setuid, unshare --map-user, …).
SWITCHING_PROGRAMS = {"runuser", "setpriv", "su", "sudo", "doas", "pkexec", "capsh", "setuidgid", "chpst"}
SWITCHING_WORD = re.compile(r"(?<![\w.-])(/\S*/)?(runuser|setpriv|sudo|doas|pkexec|capsh|setuidgid|chpst)(?![\w-])"
                            r"|(^|[\s;&|(`'\"])(/\S*/)?su(\s|$)"
                            r"|--chuid\b|--setuid\b|--map-user\b|--reuid\b|--ruid\b|(?<![\w-])--uid[= ]|(^|\s)-S\s*\d")
SWITCHING_CALLS = {"setuid", "seteuid", "setreuid", "setresuid", "setgid", "setegid", "setregid", "setresgid",
                   "setgroups", "initgroups"}
# Keyword arguments of subprocess's and asyncio's process functions that switch user, whatever the module's name.
SUBPROCESS_SWITCHES = {"user", "group", "extra_groups"}
PROCESS_FUNCTIONS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput",
                     "create_subprocess_exec", "create_subprocess_shell"}
FIXTURE_ADVICE = ("makes its own AnotherUser: take the another_user fixture instead, which marks the test "
                  "switches_user so that .ci/contributor-machine reruns it from below a 0700 directory")
SYSTEMD_ADVICE = ("boots a namespaced systemd without taking the host_unchanged fixture, which checks the host's syncd "
                  "is untouched and marks the test host_machine so that .ci/contributor-machine reruns it")


def _docstrings(tree):
    """The string constants that are docstrings (they may name runuser in prose)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _called_name(node):
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _calls(function, names):
    return any(isinstance(n, ast.Call) and _called_name(n) in names for n in ast.walk(function))


def _takes_host_check(function):
    return "host_unchanged" in {a.arg for a in function.args.args + function.args.kwonlyargs}


def _systemd_without_host_check(tree):
    """The functions that boot a namespaced systemd (NamespacedSystemd(…), or a helper of the module that does)
    and take no host_unchanged; a helper itself may go without it when every function that calls it takes it."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    helpers = {f.name for f in functions if _calls(f, {"NamespacedSystemd"}) and not _takes_host_check(f)
               and not f.name.startswith("test_") and not f.decorator_list}
    booting = {"NamespacedSystemd"} | helpers
    return [f for f in functions if f.name not in helpers and _calls(f, booting) and not _takes_host_check(f)]


def _is_nsenter_as_user(node):
    """A command line list that runs nsenter with -S/--setuid/-G/--setgid (its options as separate items)."""
    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return any(os.path.basename(w) == "nsenter" for w in words) and any(w in ("-S", "--setuid", "-G", "--setgid") for w in words)


def _subprocess_names(tree):
    """The names under which `text` reaches subprocess's and asyncio's functions: module aliases, imported names."""
    modules, functions = {"subprocess", "asyncio"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name in ("subprocess", "asyncio")}
        elif isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "asyncio"):
            functions |= {a.asname or a.name for a in node.names if a.name in PROCESS_FUNCTIONS}
    return modules, functions


def python_violations(text, name="<text>"):
    """`name:line: …` for each place in Python source `text` that switches user, makes its own AnotherUser, or boots
    a namespaced systemd without host_unchanged."""
    tree = ast.parse(text, filename=name)
    docstrings = _docstrings(tree)
    modules, functions = _subprocess_names(tree)
    problems = []
    if not name.endswith("namespaced_systemd.py"):
        problems += [f"{name}:{f.lineno}: {f.name} {SYSTEMD_ADVICE}" for f in _systemd_without_host_check(tree)]
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            value = node.value
            if os.path.basename(value) in SWITCHING_PROGRAMS or SWITCHING_WORD.search(value):
                problems.append(f"{name}:{line}: {value!r} {ADVICE}")
        elif isinstance(node, ast.Attribute) and node.attr in SWITCHING_CALLS:
            problems.append(f"{name}:{line}: {node.attr} {ADVICE}")
        elif isinstance(node, ast.List) and _is_nsenter_as_user(node):
            problems.append(f"{name}:{line}: nsenter --setuid {ADVICE}")
        elif isinstance(node, ast.ImportFrom) and any(alias.name in SWITCHING_CALLS for alias in node.names):
            problems.append(f"{name}:{line}: imports {', '.join(a.name for a in node.names)} {ADVICE}")
        elif isinstance(node, ast.Call):
            called = _called_name(node)
            func = node.func
            if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules
                    and called in PROCESS_FUNCTIONS) or (isinstance(func, ast.Name) and func.id in functions):
                for keyword in node.keywords:
                    if keyword.arg in SUBPROCESS_SWITCHES:
                        problems.append(f"{name}:{line}: {called}({keyword.arg}=…) {ADVICE}")
            if called in ("AnotherUser", "in_new_folder") and not name.endswith("conftest.py"):
                problems.append(f"{name}:{line}: {FIXTURE_ADVICE}")
    return problems


PROGRAM_NAMES = "|".join(sorted(SWITCHING_PROGRAMS))
SWIFT_SWITCH = re.compile(r'"(/\S*/)?(' + PROGRAM_NAMES + r')"|"[^"\n]*(' + SWITCHING_WORD.pattern + r')[^"\n]*"'
                          r"|\b(setuid|seteuid|setreuid|setresuid|setgid|setegid|setregid|setresgid|setgroups|initgroups)\s*\(")


def swift_violations(text, name="<text>"):
    """`name:line: …` for each line of Swift source `text` (comments aside) that switches user."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("//") and SWIFT_SWITCH.search(line):
            problems.append(f"{name}:{number}: {line.strip()} {ADVICE}")
    return problems


def shell_violations(text, name="<text>"):
    """`name:line: …` for each line of a shell script `text` (comments aside) that switches user."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("#") and SWITCHING_WORD.search(line):
            problems.append(f"{name}:{number}: {line.strip()} {ADVICE}")
    return problems


def _is_shell_script(path):
    if path.suffix in (".sh", ".bash"):
        return True
    if path.suffix:
        return False
    with open(path, "rb") as f:
        return f.read(64).startswith(b"#!") and b"sh" in f.readline()


def suite_violations():
    problems = []
    for path in sorted((ROOT / "Tests").rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or "corpus" in str(path):
            continue
        relative = str(path.relative_to(ROOT))
        if path.suffix == ".py":
            # The helper, and this file's own examples of what it refuses.
            if path not in (PYTHON_HELPER, Path(__file__).resolve()):
                problems += python_violations(path.read_text(), relative)
        elif path.suffix == ".swift":
            if path != SWIFT_HELPER:
                problems += swift_violations(path.read_text(), relative)
        elif _is_shell_script(path):
            problems += shell_violations(path.read_text(errors="replace"), relative)
    return problems


def test_every_test_switches_user_through_the_helper():
    problems = suite_violations()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", [
    'subprocess.run(["runuser", "-u", "nobody", "--", str(BIN / "syncctl"), "status"])',
    'subprocess.run([shutil.which("setpriv"), "--reuid=61000", "/x/.build/debug/syncctl"])',
    'subprocess.run("/usr/sbin/runuser -u nobody -- .build/debug/syncctl status", shell=True)',
    'subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c", "syncctl"])',
    'subprocess.run("sudo -u nobody syncctl", shell=True)',
    'subprocess.Popen([BIN / "syncd"], preexec_fn=lambda: os.setuid(65534))',
    'subprocess.run([BIN / "syncctl"], user="nobody")',
    'from subprocess import run\nrun([BIN / "syncctl"], user="nobody")',
    'import subprocess as sp\nsp.Popen([BIN / "syncctl"], group="nogroup")',
    'import asyncio\nasyncio.create_subprocess_exec(str(BIN / "syncctl"), user="nobody")',
    'from os import setuid',
    'subprocess.run(["start-stop-daemon", "--start", "--chuid", "nobody", "--exec", str(BIN / "syncctl")])',
    'subprocess.run(["capsh", "--user=nobody", "--", "-c", str(BIN / "syncctl")])',
    'subprocess.run(["systemd-run", "--uid=65534", "--pipe", str(BIN / "syncctl")])',
    'subprocess.run(["unshare", "--map-user=65534", str(BIN / "syncctl")])',
    'subprocess.run(["nsenter", "-t", "1", "-S", "65534", str(BIN / "syncctl")])',
    'os.system("chpst -u nobody " + str(BIN / "syncctl"))',
    'runner = AnotherUser.in_new_folder()',
    'def test_boots(tmp_path):\n    sd = NamespacedSystemd(tmp_path / "ns")',
    'def boot(tmp_path):\n    return NamespacedSystemd(tmp_path / "ns")\n\ndef test_boots_through_a_helper(tmp_path):\n    boot(tmp_path)',
])
def test_a_test_that_switches_user_by_hand_is_named_with_the_helper_to_use(source):
    problems = python_violations(source, "test_new.py")
    assert problems, source
    assert all(p.startswith("test_new.py:") and ("another_user fixture" in p or "host_unchanged fixture" in p)
               for p in problems), problems


def test_a_systemd_booted_by_a_helper_for_tests_that_check_the_host_is_fine():
    source = ('def boot(tmp_path):\n    return NamespacedSystemd(tmp_path / "ns")\n\n'
              'def test_boots(tmp_path, host_unchanged):\n    boot(tmp_path)\n')
    assert python_violations(source, "test_new.py") == []


@pytest.mark.parametrize("source", [
    'try runProcess("/usr/sbin/runuser", ["-u", "nobody", "--", binary])',
    'try runProcess("/bin/sh", ["-c", "runuser -u nobody -- \\(binary)"])',
    'try runProcess("/usr/bin/su", ["nobody"])',
    'let status = setuid(65534)',
    'let status = setregid(65534, 65534)',
])
def test_a_swift_test_that_switches_user_by_hand_is_named_with_the_helper_to_use(source):
    problems = swift_violations("// a comment naming runuser is fine\n" + source, "New.swift")
    assert len(problems) == 1 and problems[0].startswith("New.swift:2: ") and "runAsAnotherUser" in problems[0], problems


def test_a_shell_script_that_switches_user_is_named_with_the_helper_to_use():
    problems = shell_violations("#!/bin/sh\n# runuser in a comment is fine\nrunuser -u nobody -- .build/debug/syncctl status\n",
                                "Tests/x.sh")
    assert len(problems) == 1 and problems[0].startswith("Tests/x.sh:3: "), problems


def test_prose_and_other_programs_are_not_taken_for_a_user_switch():
    source = '"""Runs syncctl as nobody (runuser), from a folder of its own."""\n' \
             'subprocess.run(["ip", "netns", "exec", "ns", "curl", "--user-agent", "x"])\n' \
             'subprocess.Popen(["syncd"], preexec_fn=lambda: os.nice(5))\n' \
             'subprocess.run([BIN / "syncd", "--user", "--once"])\n' \
             'subprocess.run(["systemctl", "--user", "status", "syncd"])\n' \
             'another_user.run([BIN / "syncctl", "status"], user="nobody")\n' \
             'sd.run("systemctl", "status", "syncd", user="root")\n'
    assert python_violations(source) == []


def test_the_helper_refuses_a_file_another_user_cannot_reach(another_user, tmp_path):
    private = tmp_path / "syncd.conf"
    private.write_text("[Daemon]\n")
    with pytest.raises(ValueError, match=r"lies outside .* another_user.file"):
        another_user.command([BIN / "syncd", "--check-config", f"--config-dir={tmp_path}"], user="nobody")
    # A shell command line naming a program of the checkout, or a path that leaves the system's folders by "..".
    with pytest.raises(ValueError, match="lies in the checkout"):
        AnotherUser.system_command(["/bin/sh", "-c", f"{BIN}/syncctl --version"], "nobody")
    with pytest.raises(ValueError, match="lies outside"):
        another_user.command(["/bin/sh", "-c", f"{BIN}/syncctl --version"], user="nobody")
    assert another_user.program("/usr/.." + str(BIN / "syncctl")) == another_user.folder / "syncctl"
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
