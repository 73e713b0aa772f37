"""`make demo` (config/demo/run-demo): every step shows the command exactly as it runs, a note says what
happens between steps, and the outcome of each step is the real one (the cache file, the status, the log)."""
import os
import re
import subprocess

from conftest import BIN, ROOT, free_port



def test_the_demo_shows_each_command_as_it_runs_and_what_it_did():
    env = dict(os.environ, NO_COLOR="1", DEMO_PORT=str(free_port()), BIN=str(BIN))
    env.pop("SYNCD_SOCKET", None)
    r = subprocess.run([str(ROOT / "config" / "demo" / "run-demo")], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = [line[2:] for line in r.stdout.splitlines() if line.startswith("$ ")]
    assert steps == [
        "syncd --check-config --config-dir build/demo/etc",
        "syncd --once --config-dir build/demo/etc",
        "cat build/demo/cache/default/posts.json",
        "syncd --config-dir build/demo/etc 2>build/demo/syncd.log &",
        "syncctl status",
        "syncctl refresh posts --wait",
        "syncctl status",
        "cat build/demo/syncd.log",
    ]
    notes = [line for line in r.stdout.splitlines() if line.startswith("# ")]
    assert len(notes) == 4 and all(n.endswith(".") for n in notes)
    assert "\x1b[" not in r.stdout                                           # NO_COLOR: plain text
    assert "configuration OK\n" in r.stdout and "posts: synced 3 records (listing changed)\n" in r.stdout
    assert re.search(r"^● posts  idle  3 records  synced \d+s ago$", r.stdout, re.M)
    assert re.search(r"^● posts  backoff  3 records  synced \d+s ago$", r.stdout, re.M)
    assert "syncctl: refresh of posts failed: cannot reach http://localhost:" in r.stdout
    assert r.stderr == ""
