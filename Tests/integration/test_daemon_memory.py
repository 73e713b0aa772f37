"""An idle daemon unmaps the clean pages of its code and read-only data (docs/architecture.md, "Memory"),
and everything keeps working afterwards: the pages come back from the files on use."""
import json
import subprocess
from pathlib import Path

from conftest import BIN, POSTS, wait_for
from test_syncctl import syncctl


def mappings(pid):
    """(header fields, counters) per mapping of /proc/PID/smaps."""
    result, current = [], None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].endswith(":") and "-" in fields[0]:
            current = (fields, {})
            result.append(current)
        elif current and len(fields) == 3 and fields[2] == "kB":
            current[1][fields[0][:-1]] = int(fields[1])
    assert any(f[-1] == "[stack]" for f, _ in result), "not the whole of smaps"
    return result


def resident_code(pid, name):
    """KiB resident in the executable mappings (r-xp) of files whose path contains `name`."""
    return sum(c["Rss"] for f, c in mappings(pid) if f[1] == "r-xp" and len(f) > 5 and name in f[5])


def relocated_data(pid):
    """Resident KiB of private copies in read-only file mappings (relocated data): never unmapped."""
    return sum(c["Anonymous"] for f, c in mappings(pid) if f[1] == "r--p" and len(f) > 5 and f[5].startswith("/"))


def test_an_idle_daemon_unmaps_its_clean_code_pages_and_faults_them_back_on_use(server, setup, daemons):
    setup.write_main("[Retry]\nInitialDelaySec=200ms\nMaxDelaySec=1s\n")
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"), Writable="yes")
    d = daemons(setup, env={"SYNCD_LOG_LEVEL": "debug"})
    d.wait_log("posts: synced 2 records")
    d.wait_log("Idle: unmapped ")
    released = int(d.output().split("Idle: unmapped ", 1)[1].split()[0])
    assert released > 1024, d.output()
    pid = d.proc.pid
    # libcrypto stays mapped after libcurl's dlclose (Debian links it NODELETE) and nothing idle runs it:
    # none of its code is resident. Its relocated data keeps its private pages.
    assert "/libcrypto.so" in Path(f"/proc/{pid}/maps").read_text()
    wait_for(lambda: resident_code(pid, "/libcrypto.so") == 0, what="libcrypto's code unmapped")
    assert relocated_data(pid) > 0
    # Everything works with its code faulted back in: status, a local change pushed to the server
    # (libcurl loaded again), a refresh that brings the server's change.
    wait_for(lambda: (setup.runtime / "io.syncd.Manager").exists(), what="control socket")
    status = syncctl(setup, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["sources"][0]["name"] == "posts"
    put = subprocess.run([str(BIN / "syncctl"), "--socket", str(setup.runtime / "io.syncd.Manager"), "put", "posts", "-"],
                         input=json.dumps({"title": "after unmapping"}), capture_output=True, text=True, timeout=30)
    assert put.returncode == 0, put.stderr
    wait_for(lambda: any(r.get("title") == "after unmapping" for r in server.records("posts")), what="the put on the server")
    server.set_records("posts", server.records("posts") + [{"id": 99, "title": "from the server"}])
    assert syncctl(setup, "refresh", "posts", "--wait").returncode == 0
    titles = [r["title"] for r in setup.cache_doc("posts")["records"]]
    assert titles[:2] == [p["title"] for p in POSTS] and "after unmapping" in titles and titles[-1] == "from the server"
    assert resident_code(pid, "/syncd") > 0
    assert "Failed to" not in d.output(), d.output()
    assert d.stop() == 0
