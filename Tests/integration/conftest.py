"""Fixtures for syncd's black-box integration tests: real binaries, real servers, real files."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from another_user import AnotherUser

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("SYNCD_BIN_DIR", ROOT / ".build" / "debug"))


def pytest_configure(config):
    config.addinivalue_line("markers", "switches_user: runs a program as another user (takes the another_user "
                            "fixture); .ci/contributor-machine reruns these from below a 0700 directory")
    config.addinivalue_line("markers", "host_machine: boots systemd or touches the host's syncd folders (takes the "
                            "host_unchanged fixture); .ci/contributor-machine reruns these on a machine with syncd installed")
    config.addinivalue_line("markers", "release_binaries: also run against the release binaries users run (make "
                            "integration-release), beside the files RELEASE_TESTS lists whole")
    config.addinivalue_line("markers", "damaged_cache_file: leaves a cache file damaged on purpose, so the check "
                            "that every cache file follows the shipped schema skips it")


CACHE_SCHEMA = ROOT / "docs" / "cache.schema.json"
# A cache file as syncd writes it begins with these bytes (syncd.cache(5)); what else a test leaves is its own.
CACHE_FILE_START = b'{"schemaVersion":'


def cache_files_below(top):
    """Every file below `top` that syncd published as a cache file: `NAME.json`, not hidden, beginning as
    syncd's documents do (a file a test damaged on purpose is moved aside by syncd or marked by the test)."""
    for folder, _, names in os.walk(top):
        for name in names:
            path = Path(folder) / name
            if name.endswith(".json") and not name.startswith(".") and path.is_file() and not path.is_symlink():
                with open(path, "rb") as f:
                    if f.read(len(CACHE_FILE_START)) == CACHE_FILE_START:
                        yield path


def check_cache_file_schema(path, validator):
    """Validates one cache file against the shipped JSON Schema; a long listing is checked on its first and
    last 1,000 records (the schema says the same of each record), the document's other members in full."""
    with open(path, "rb") as f:
        document = json.load(f)
    records = document.get("records")
    if isinstance(records, list) and len(records) > 2000:
        document = dict(document, records=records[:1000] + records[-1000:])
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, f"{path} does not follow {CACHE_SCHEMA.name}: " + "; ".join(
        f"/{'/'.join(map(str, e.path))}: {e.message[:200]}" for e in errors[:5])


@pytest.fixture(autouse=True)
def cache_files_follow_the_schema(request):
    """After every test that used a temporary folder, each cache file syncd left there validates against the
    JSON Schema the package installs (docs/cache.schema.json): what apps are promised is what every test wrote.
    A test that leaves a cache file damaged on purpose carries @pytest.mark.damaged_cache_file."""
    # Asked for before the test, so the folder is still known when this fixture's teardown runs.
    top = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if top is None or request.node.get_closest_marker("damaged_cache_file"):
        return
    import jsonschema
    validator = jsonschema.Draft202012Validator(json.loads(CACHE_SCHEMA.read_text()))
    for path in cache_files_below(top):
        check_cache_file_schema(path, validator)


def pytest_collection_modifyitems(items):
    """Marks each test by what it does, from the fixtures it takes, so that no list of tests is kept by hand."""
    for item in items:
        if "another_user" in item.fixturenames:
            item.add_marker(pytest.mark.switches_user)
        if "host_unchanged" in item.fixturenames:
            item.add_marker(pytest.mark.host_machine)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout=10.0, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


# How long a process may take to end after SIGTERM before it counts as hung. syncd's own stop deadline (syncd(8)
# SIGNALS) is the core's rule, checked with a manual clock by DaemonStateMachineTests; this only catches a hang,
# generously enough not to fail a test because the machine is busy.
STOP_HANG_SEC = 15


def stop_process(proc):
    """SIGTERM; a process not gone within STOP_HANG_SEC is killed and the test FAILS: a hang on stop can never
    pass silently."""
    proc.terminate()
    try:
        proc.wait(STOP_HANG_SEC)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"pid {proc.pid} did not exit within {STOP_HANG_SEC} s of SIGTERM (hung; killed it)")


def assert_refused_keeping_the_copy(r, setup, before, reason, source="posts", kept=2):
    """`syncd --once` refused the response of `source` (syncd(8) GUARANTEES 2): exit 1, one line naming `reason`
    and the records kept, the cache file byte for byte as `before`, no temporary file left."""
    assert r.returncode == 1
    line = [l for l in r.stderr.splitlines() if l.startswith(f"{source}: ")]
    assert len(line) == 1, r.stderr
    assert reason in line[0]
    assert line[0].endswith(f"(kept {kept} cached records)")
    assert setup.cache_file(source).read_bytes() == before
    assert setup.leftovers() == []


def fill_filesystem(path):
    """Writes zeros to `path` until its file system is full; returns the file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return path


class SyncServer:
    """The test tree's Python server (Tests/integration/server/syncserver.py)."""

    def __init__(self, workdir, host="127.0.0.1", netns=None, port=0):
        Path(workdir).mkdir(parents=True, exist_ok=True)
        self.port_file = Path(workdir) / "syncserver.port"
        cmd = [sys.executable, str(HERE / "server" / "syncserver.py"), "--host", host, "--port", str(port),
               "--port-file", str(self.port_file)]
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
        wait_for(self.port_file.exists, what="syncserver to listen")
        self.host = host
        self.netns = netns
        self.port = int(self.port_file.read_text())
        self.base = f"http://{host}:{self.port}"

    def url(self, name):
        return f"{self.base}/{name}"

    def _call(self, method, path, body=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        if self.netns:
            # The server lives in another network namespace: reach it from inside that namespace.
            cmd = ["ip", "netns", "exec", self.netns, "curl", "-sf", "-X", method, self.base + path]
            if data is not None:
                cmd += ["--data-binary", "@-"]
            return subprocess.run(cmd, input=data or b"", capture_output=True, check=True, timeout=10).stdout
        req = urllib.request.Request(self.base + path, data=data, method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()

    def set_records(self, name, records):
        self._call("PUT", f"/_control/collections/{name}", records)

    def set_raw(self, name, raw: bytes):
        self._call("PUT", f"/_control/collections/{name}?raw=1", raw)

    def records(self, name):
        return json.loads(self._call("GET", f"/_control/collections/{name}"))

    def fault(self, name, **fault):
        self._call("PUT", f"/_control/faults/{name}", fault)

    def clear_fault(self, name):
        self._call("DELETE", f"/_control/faults/{name}")

    def release(self, name):
        """Lets the request a kind="hold" fault of `name` keeps waiting go on."""
        self._call("PUT", f"/_control/release/{name}", b"")

    def options(self, name, **options):
        self._call("PUT", f"/_control/options/{name}", options)

    def requests(self, path_prefix=None):
        reqs = json.loads(self._call("GET", "/_control/requests"))
        if path_prefix:
            reqs = [r for r in reqs if r["path"].split("?")[0] == path_prefix]
        return reqs

    def clear_requests(self):
        self._call("DELETE", "/_control/requests")

    def expire_sync_tokens(self, name, before=None):
        """With options(syncTokens=True): a ?syncToken= below `before` (default: every token but the current one) answers 410."""
        self._call("PUT", f"/_control/expire/{name}", {} if before is None else {"before": before})

    def change_log(self, name):
        """{"seq": S, "expiredBefore": N, "log": [[seq, id], ...]}: the changes a ?syncToken= request is answered from."""
        return json.loads(self._call("GET", f"/_control/changes/{name}"))

    def stop(self):
        stop_process(self.proc)


class Nginx:
    """Debian's nginx serving a folder of static collections with ETag and Last-Modified."""

    def __init__(self, workdir):
        self.root = Path(workdir) / "nginx-root"
        self.root.mkdir()
        self.prefix = Path(workdir) / "nginx"
        self.prefix.mkdir()
        self.port = free_port()
        self.access_log = self.prefix / "access.log"
        conf = self.prefix / "nginx.conf"
        user = "user root root;" if os.geteuid() == 0 else ""
        conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {self.prefix}/nginx.pid;
error_log {self.prefix}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log {self.access_log};
    types {{ application/json json; }}
    client_body_temp_path {self.prefix};
    proxy_temp_path {self.prefix};
    fastcgi_temp_path {self.prefix};
    uwsgi_temp_path {self.prefix};
    scgi_temp_path {self.prefix};
    server {{
        listen 127.0.0.1:{self.port};
        root {self.root};
        etag on;
        gzip on;
        gzip_types application/json;
    }}
}}
""")
        self.proc = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(self.prefix)], stderr=subprocess.DEVNULL)
        wait_for(lambda: self._up(), what="nginx to listen")

    def _up(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def statuses(self, count):
        """HTTP statuses in the access log, in order, once it holds `count` lines (or after 5 s): nginx logs a
        request after sending its response, so a client can exit before the line is written."""
        deadline = time.monotonic() + 5
        while True:
            lines = self.access_log.read_text().splitlines() if self.access_log.exists() else []
            if len(lines) >= count or time.monotonic() > deadline:
                return [int(line.split('"')[2].split()[0]) for line in lines if line]
            time.sleep(0.01)

    def stop(self):
        stop_process(self.proc)


class Setup:
    """A syncd configuration folder with state and cache directories below a temp dir."""

    def __init__(self, workdir, account="default"):
        self.dir = Path(workdir)
        self.config = self.dir / "etc"
        self.state = self.dir / "state"
        self.cache = self.dir / "cache"
        self.runtime = self.dir / "run"
        self.account = account
        (self.config / "sources.d").mkdir(parents=True)
        self.write_main()

    def write_main(self, extra=""):
        (self.config / "syncd.conf").write_text(
            f"[Daemon]\nAccount={self.account}\nStateDirectory={self.state}\nCacheDirectory={self.cache}\n"
            f"RuntimeDirectory={self.runtime}\n" + extra)

    def add_source(self, name, url, **keys):
        lines = ["[Source]", f"URL={url}"]
        for k, v in keys.items():
            if isinstance(v, list):
                lines += [f"{k}={item}" for item in v]
            else:
                lines.append(f"{k}={v}")
        (self.config / "sources.d" / f"{name}.source").write_text("\n".join(lines) + "\n")

    def cache_file(self, name):
        return self.cache / self.account / f"{name}.json"

    def cache_doc(self, name):
        return json.loads(self.cache_file(name).read_bytes())

    def db(self):
        return self.state / self.account / "state.db"

    def leftovers(self):
        """Temporary files left in the cache folder (there must never be any)."""
        d = self.cache / self.account
        return sorted(p.name for p in d.iterdir() if ".tmp-" in p.name) if d.exists() else []

    def syncd(self, *args, env=None, timeout=60):
        full_env = dict(os.environ)
        full_env.pop("JOURNAL_STREAM", None)
        full_env.pop("NOTIFY_SOCKET", None)
        full_env.update(env or {})
        return subprocess.run([str(BIN / "syncd"), "--config-dir", str(self.config), *args],
                              capture_output=True, text=True, env=full_env, timeout=timeout)


@pytest.fixture
def another_user():
    """Runs programs as another user from a folder made for the test (another_user.AnotherUser): the only way a
    test may switch user; removed afterwards."""
    runner = AnotherUser.in_new_folder()
    try:
        yield runner
    finally:
        runner.remove()


@pytest.fixture
def server(tmp_path):
    s = SyncServer(tmp_path)
    yield s
    s.stop()


@pytest.fixture
def nginx(tmp_path):
    if shutil.which("nginx") is None:
        pytest.fail("nginx is not installed; run 'make deps'")
    n = Nginx(tmp_path)
    yield n
    n.stop()


@pytest.fixture
def setup(tmp_path):
    return Setup(tmp_path)


POSTS = [
    {"id": 1, "title": "Post 1", "author": "Johnny Appleseed"},
    {"id": 2, "title": "Post 2", "author": "Jane Doe"},
]


class NotifySocket:
    """An AF_UNIX datagram socket standing in for systemd's NOTIFY_SOCKET."""

    def __init__(self, workdir):
        self.path = str(Path(workdir) / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self.messages = []  # (monotonic time, text)

    def drain(self):
        while True:
            try:
                self.messages.append((time.monotonic(), self.sock.recv(65536).decode()))
            except (socket.timeout, BlockingIOError):
                return self.messages

    def wait_for(self, fragment, timeout=10.0):
        def seen():
            self.drain()
            return any(fragment in m for _, m in self.messages)
        wait_for(seen, timeout=timeout, what=f"notify message {fragment!r}")
        return next(t for t, m in self.messages if fragment in m)

    def close(self):
        self.sock.close()


# What a crash looks like to subprocess: killed by SIGILL (a Swift trap), SIGTRAP, SIGABRT, SIGBUS, SIGFPE
# or SIGSEGV. The tests send only SIGTERM, SIGINT, SIGHUP and SIGKILL.
CRASH_CODES = {-4, -5, -6, -7, -8, -11}


class Daemon:
    """A running `syncd` (foreground) with its stderr captured to a file."""

    def __init__(self, setup, notify=None, env=None, netns=None):
        self.setup = setup
        self.log_path = setup.dir / f"syncd-{time.monotonic_ns()}.log"
        self.log = open(self.log_path, "w")
        full_env = dict(os.environ)
        full_env.pop("JOURNAL_STREAM", None)
        if notify:
            full_env["NOTIFY_SOCKET"] = notify.path
        else:
            full_env.pop("NOTIFY_SOCKET", None)
        full_env.update(env or {})
        cmd = [str(BIN / "syncd"), "--config-dir", str(setup.config)]
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=full_env)

    def output(self):
        self.log.flush()
        return self.log_path.read_text()

    def wait_log(self, fragment, timeout=10.0, count=1):
        return wait_for(lambda: self.output().count(fragment) >= count, timeout=timeout, what=f"log {fragment!r}")

    def signal(self, number):
        self.proc.send_signal(number)

    def stop(self):
        """SIGTERM; fails the test when the daemon hangs on stop (see stop_process)."""
        try:
            if self.proc.poll() is None:
                stop_process(self.proc)
        finally:
            self.log.close()
        return self.proc.returncode


@pytest.fixture
def running(server, setup, daemons):
    """A daemon with the source "posts" (POSTS) synced and its control socket up."""
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    # The lane logs "synced" before the loop records the result: until then status still says "syncing".
    wait_for(lambda: _status_state(setup, "posts") == "idle", what="posts idle in syncctl status")
    return d


def _status_state(setup, source):
    """The state `syncctl status --json` reports for `source`, or None when it does not answer."""
    socket_path = setup.runtime / "io.syncd.Manager"
    r = subprocess.run([str(BIN / "syncctl"), "--socket", str(socket_path), "status", "--json"],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return None
    for entry in json.loads(r.stdout).get("sources", []):
        if entry.get("name") == source:
            return entry.get("state")
    return None


@pytest.fixture
def notify(tmp_path):
    n = NotifySocket(tmp_path)
    yield n
    n.close()


@pytest.fixture
def daemons():
    started = []

    def start(setup, **kwargs):
        d = Daemon(setup, **kwargs)
        started.append(d)
        return d
    yield start
    crashed = []
    for d in started:
        d.stop()
        # A daemon that died of a crash signal fails the test it ran in, with its log: a crash at any moment
        # (during the run or while stopping) is a bug, even when the test's own assertions held.
        if d.proc.returncode in CRASH_CODES:
            crashed.append(f"syncd died of signal {-d.proc.returncode}; its log:\n{d.output()}")
    assert not crashed, "\n".join(crashed)
