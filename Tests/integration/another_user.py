"""The one way a test runs a program as another user (nobody, or an unprivileged UID of its own).

A checkout may lie below a directory other users cannot enter (a clone under /root, or in a 0700 home
made by Debian's adduser), and so may pytest's temporary folders (`--basetemp` below such a directory,
or a mktemp -d folder, which is 0700). A program another user runs must therefore come from the system
(/usr, /bin, …) or be copied into a folder made for the test that every user can reach; a test never
widens the permissions of directories it did not create.

`AnotherUser` (conftest's `another_user` fixture) owns such a folder and builds the command lines:
it copies syncd or syncctl (and the shared libraries a debug build loads from the toolchain) into the
folder, and refuses an argument naming a file outside the system and that folder, with a message that
says what to do. No other test file may call runuser(1), setpriv(1), su(1) or setuid(2):
test_hermetic.py fails the suite if one does, and the tests that take the fixture are the ones
`.ci/contributor-machine` reruns from below a 0700 directory (the `switches_user` marker)."""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

# Folders every user can reach on Debian, whatever the checkout's parents are.
SYSTEM_FOLDERS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/", "/proc/", "/dev/")
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"


def copy_program(binary, folder):
    """Copies `binary` into `folder` with the shared libraries it loads from outside the system's library
    folders (the Swift runtime of a debug build, found through its RUNPATH $ORIGIN), all mode 0755.
    Returns the copy's path."""
    binary, folder = Path(binary), Path(folder)
    copy = folder / binary.name
    shutil.copy2(binary, copy)
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    for library in re.findall(r"=> (/\S+)", ldd):
        if not library.startswith(("/lib/", "/lib64/", "/usr/lib/")):
            shutil.copy2(library, folder)
    for entry in folder.iterdir():
        if entry.is_file():
            os.chmod(entry, 0o755)
    return copy


# The checkout: nothing in it may be handed to another user as it is.
CHECKOUT = Path(__file__).resolve().parents[2]
# What separates the words of an argument that may be a shell command line (`sh -c "…"`) or an option (`--x=/p`).
WORD_BREAKS = re.compile(r"""[\s'"`;&|()<>=,:]+""")


def _is_system_path(path):
    return os.path.normpath(str(path)).startswith(SYSTEM_FOLDERS)


def _paths_in(argument):
    """The absolute paths named in `argument`: itself, and each word of it (a shell command line, an option)."""
    words = [argument] + WORD_BREAKS.split(argument)
    return [os.path.normpath(w) for w in words if w.startswith("/")]


def _in_checkout(path):
    path = Path(path)
    return path == CHECKOUT or CHECKOUT in path.parents


def _refuse_checkout_paths(argv, who):
    for argument in argv:
        for path in _paths_in(argument):
            if _in_checkout(path):
                raise ValueError(
                    f"{who}: {path} lies in the checkout, which another user may not reach (it can be below a 0700 "
                    f"directory): run it through the another_user fixture, which copies programs and files to a "
                    f"folder that user can reach")


class AnotherUser:
    """Builds command lines that run a program as another user from `folder` (mode 0755, made for the test).

    `command(argv, user="nobody")` runs with runuser(1) as a named user; `command(argv, uid=61000)` with
    setpriv(1) as a bare UID (same GID, no supplementary groups)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self._copies = {}

    @classmethod
    def in_new_folder(cls, prefix="syncd-test-user-"):
        """A folder in /tmp (0755) that every user can enter; `remove()` deletes it."""
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
        os.chmod(folder, 0o755)
        return cls(folder)

    def remove(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    @staticmethod
    def system_command(argv, user):
        """`argv` run as `user` with runuser(1), for a system program only (e.g. inside a namespaced systemd, where
        the package installed /usr/bin/syncctl): nothing needs copying, and anything else is refused."""
        argv = [str(a) for a in argv]
        if not _is_system_path(argv[0]):
            raise ValueError(f"AnotherUser.system_command: {argv[0]} is not a system program; use the another_user "
                             f"fixture's command(), which copies it to a folder {user} can reach")
        _refuse_checkout_paths(argv[1:], "AnotherUser.system_command")
        return [RUNUSER, "-u", user, "--", os.path.normpath(argv[0]), *argv[1:]]

    def program(self, path):
        """The path another user runs for `path`: a system program as it is (a bare name found in PATH), anything
        else copied into the folder."""
        if "/" not in str(path):
            path = shutil.which(str(path)) or path
        path = Path(path)
        if _is_system_path(path):
            return Path(os.path.normpath(path))
        if path not in self._copies:
            self._copies[path] = copy_program(path, self.folder)
        return self._copies[path]

    def file(self, path, mode=0o644):
        """Copies a data file (a script, a fixture) into the folder, readable by every user; returns the copy."""
        copy = self.folder / Path(path).name
        shutil.copy2(path, copy)
        os.chmod(copy, mode)
        return copy

    def reachable(self, path):
        """True for paths another user may be given: the system's, and this folder's."""
        path = Path(os.path.normpath(os.path.abspath(path)))
        return _is_system_path(path) or path == self.folder or self.folder in path.parents

    def command(self, argv, user=None, uid=None):
        """`argv` run as `user` (runuser) or `uid` (setpriv); exactly one of them."""
        if (user is None) == (uid is None):
            raise ValueError("AnotherUser.command: give exactly one of user= or uid=")
        argv = [str(a) for a in argv]
        program = str(self.program(argv[0]))
        for value in (path for argument in argv[1:] for path in _paths_in(argument)):
            if (_in_checkout(value) or os.path.exists(value)) and not self.reachable(value):
                raise ValueError(
                    f"AnotherUser.command: {value} lies outside {self.folder} and the system's folders, so "
                    f"another user may not reach it (the checkout or pytest's folders can be below a 0700 "
                    f"directory): put it in the folder with another_user.file(...), or make it there")
        if user is not None:
            return [RUNUSER, "-u", user, "--", program, *argv[1:]]
        return [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", program, *argv[1:]]

    def run(self, argv, user=None, uid=None, **kwargs):
        """subprocess.run of `command(...)`, in the folder unless `cwd=` says otherwise."""
        kwargs.setdefault("cwd", self.folder)
        return subprocess.run(self.command(argv, user=user, uid=uid), **kwargs)

    def popen(self, argv, user=None, uid=None, **kwargs):
        """subprocess.Popen of `command(...)`, in the folder unless `cwd=` says otherwise."""
        kwargs.setdefault("cwd", self.folder)
        return subprocess.Popen(self.command(argv, user=user, uid=uid), **kwargs)
