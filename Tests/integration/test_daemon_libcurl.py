"""libcurl is loaded only while a transfer runs (docs/architecture.md, "libcurl on demand")."""
import subprocess
from pathlib import Path

from conftest import BIN, POSTS, wait_for


def libcurl_mapped(pid):
    maps = Path(f"/proc/{pid}/maps").read_text()
    assert "[stack]" in maps, "not the whole of /proc/PID/maps"
    return any("/libcurl.so" in line for line in maps.splitlines())


def test_an_idle_daemon_has_libcurl_unloaded_and_loads_it_for_a_refresh(server, setup, daemons):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    # No retry of the failed refresh below: retries a second or two apart would keep libcurl loaded between them.
    setup.write_main("[Retry]\nInitialDelaySec=1h\nMaxDelaySec=1h\n")
    d = daemons(setup)
    d.wait_log("posts: synced 2 records")
    # The refresh lane closed its engine; the prober and the local lane keep no handle: libcurl is gone 2–4 s later.
    wait_for(lambda: not libcurl_mapped(d.proc.pid), what="libcurl unloaded after the first refresh")
    assert setup.cache_doc("posts")["records"] == POSTS
    # A refresh whose response stalls keeps libcurl loaded while its transfer runs ...
    server.fault("posts", kind="stall", seconds=3)
    socket = setup.runtime / "io.syncd.Manager"
    wait_for(socket.exists, what="control socket")
    command = [str(BIN / "syncctl"), "--socket", str(socket), "refresh", "posts", "--wait"]
    refresh = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: libcurl_mapped(d.proc.pid), what="libcurl loaded for the refresh")
    # ... and unloads it 2–4 s after the transfer ends (here the server cuts it short: a refresh failure).
    _, err = refresh.communicate(timeout=30)
    assert refresh.returncode == 1 and "connection closed before the whole body arrived" in err, err
    wait_for(lambda: not libcurl_mapped(d.proc.pid), what="libcurl unloaded after the failed refresh")
    # Loaded again for the next refresh, which succeeds.
    server.clear_fault("posts")
    server.set_records("posts", POSTS[:1])
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert setup.cache_doc("posts")["records"] == POSTS[:1]
    wait_for(lambda: not libcurl_mapped(d.proc.pid), what="libcurl unloaded after the second refresh")
    assert d.stop() == 0


def test_a_missing_libcurl_fails_the_refresh_clearly_and_keeps_the_cached_copy(server, setup):
    server.set_records("posts", POSTS)
    setup.add_source("posts", server.url("posts"))
    assert setup.syncd("--once").returncode == 0
    before = setup.cache_file("posts").read_bytes()
    server.set_records("posts", POSTS[:1])
    # In a mount namespace of its own, libcurl.so.4 is an empty file: dlopen fails as with the package removed.
    library = Path("/usr/lib/x86_64-linux-gnu/libcurl.so.4").resolve()
    script = f'mount --bind /dev/null {library} && exec "$@"'
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                        str(BIN / "syncd"), "--config-dir", str(setup.config), "--once"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    # dlerror names the file as the dynamic linker found it (/lib or /usr/lib: the same file on Debian).
    assert "posts: Failed to load libcurl (libcurl.so.4): /" in r.stderr, r.stderr
    assert "/libcurl.so.4: file too short; install the libcurl4 package" in r.stderr, r.stderr
    assert setup.cache_file("posts").read_bytes() == before
    # With libcurl back, the next run brings the change.
    assert setup.syncd("--once").returncode == 0
    assert setup.cache_doc("posts")["records"] == POSTS[:1]
