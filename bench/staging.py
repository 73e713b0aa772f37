#!/usr/bin/env python3
"""The cost of staging a first sync's pages so that it can resume (issue 26; syncd.conf(5), "RESUMING A FIRST SYNC"),
side by side in one run.

nginx on loopback serves one listing (bench/make-listing.py, 100,000 records by default) split into PAGES pages, to two
sources that differ only in how they page: `Pagination=header` (a `Next-Page:` header, Kinto's way: a first sync that
can resume, so each page but the last is staged in the state database) and `Pagination=page` (`?page=N`, ending on
an empty page: no `Delta=watermark`, so it starts over when cut short and stages nothing). Each round runs
`syncd --once` for each, from no state and no cache (a first sync), and records from wait4's rusage its wall time,
its CPU time (user + system) and the bytes it caused to be written to storage (`ru_oublock` × 512: /proc/PID/io's
`write_bytes`); then the state database's size on disk (`state.db` and its WAL), which keeps the
staged pages' space as free pages.

With `--rate 10m`, nginx sends at most that many bytes per second per response (`limit_rate`): a link like a
user's rather than loopback.

Usage: bench/staging.py [--records 100000] [--pages 10] [--runs 5] [--rate 10m] [--bin .build/release]
Writes the section "Resuming a first sync: the cost of staging its pages" of docs/benchmarks.md and prints it.
"""
import argparse
import datetime
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from docsection import put_section  # noqa: E402
from listings import free_port, listing  # noqa: E402


def write_pages(records, pages, www):
    """The listing in `pages` files p1.json … pN.json of equal length (the last takes the rest), and empty.json."""
    items = json.loads(listing(records).read_bytes())
    size = -(-len(items) // pages)
    for n in range(pages):
        (www / f"p{n + 1}.json").write_text(json.dumps(items[n * size:(n + 1) * size], separators=(",", ":")))
    (www / "empty.json").write_text("[]")
    return sum((www / f"p{n + 1}.json").stat().st_size for n in range(pages))


def start_nginx(work, www, pages, rate):
    port = free_port()
    folder = work / "nginx"
    folder.mkdir(parents=True)
    user = "user root root;" if os.getuid() == 0 else ""
    nexts = "\n".join(f'    "{"" if n == 1 else n}" "/h.json?page={n + 1}";' for n in range(1, pages))
    files = "\n".join(f'    "{n}" "/p{n}.json";' for n in range(1, pages + 1))
    (folder / "nginx.conf").write_text(f"""{user}
daemon off; worker_processes 1; pid {folder}/nginx.pid; error_log {folder}/error.log;
events {{ worker_connections 64; }}
http {{ types {{ application/json json; }} sendfile on; access_log off; {f"limit_rate {rate};" if rate else ""}
  client_body_temp_path {folder}; proxy_temp_path {folder}; fastcgi_temp_path {folder}; uwsgi_temp_path {folder}; scgi_temp_path {folder};
  map $arg_page $next_page {{ default "";
{nexts}
  }}
  map $arg_page $page_file {{ default "/empty.json"; "" "/p1.json";
{files}
  }}
  server {{ listen 127.0.0.1:{port}; root {www};
    location = /h.json {{ add_header Next-Page $next_page; rewrite ^ $page_file break; }}
    location = /p.json {{ rewrite ^ $page_file break; }} }} }}
""")
    proc = subprocess.Popen(["nginx", "-c", str(folder / "nginx.conf"), "-p", str(folder)])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("nginx did not start")


def configure(work, name, port, pagination):
    directory = work / name
    (directory / "etc" / "sources.d").mkdir(parents=True)
    (directory / "etc" / "syncd.conf").write_text(
        f"[Daemon]\nStateDirectory={directory}/state\nCacheDirectory={directory}/cache\nRuntimeDirectory={directory}/run\n")
    url = f"http://127.0.0.1:{port}/h.json" if pagination == "header" else f"http://127.0.0.1:{port}/p.json?page=1"
    (directory / "etc" / "sources.d" / "posts.source").write_text(
        f"[Source]\nURL={url}\nPagination={pagination}\nMaxBytes=1G\nMaxPages=100000\n")
    return directory


def first_sync(binary, directory):
    shutil.rmtree(directory / "state", ignore_errors=True)
    shutil.rmtree(directory / "cache", ignore_errors=True)
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    child = subprocess.Popen([str(binary / "syncd"), "--once", "--config-dir", str(directory / "etc")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode()
    if status != 0:
        raise SystemExit(f"syncd --once failed for {directory.name}:\n{err[-2000:]}")
    state = sum(p.stat().st_size for p in (directory / "state").rglob("*") if p.is_file())
    # (Not ru_maxrss: a child's counts the parent's resident set at the fork, before the exec.)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "written": usage.ru_oublock * 512, "state": state}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rate", default="", help="nginx's limit_rate per response, e.g. 10m (default: none)")
    parser.add_argument("--bin", default=str(ROOT / ".build" / "release"))
    args = parser.parse_args()
    binary = Path(args.bin).resolve()
    work = ROOT / "bench" / "out" / ("staging-" + args.rate if args.rate else "staging")
    shutil.rmtree(work, ignore_errors=True)
    www = work / "www"
    www.mkdir(parents=True)
    total = write_pages(args.records, args.pages, www)
    nginx, port = start_nginx(work, www, args.pages, args.rate)
    modes = {"header": configure(work, "header", port, "header"), "page": configure(work, "page", port, "page")}
    rows = {mode: [] for mode in modes}
    try:
        for _ in range(args.runs):
            for mode, directory in modes.items():
                rows[mode].append(first_sync(binary, directory))
        for mode, directory in modes.items():
            [cache] = (directory / "cache").rglob("posts.json")
            assert len(json.loads(cache.read_bytes())["records"]) == args.records, mode
    finally:
        nginx.terminate()
        nginx.wait()
    print(report(args, total, rows))


def report(args, total, rows):
    med = statistics.median
    label = {"header": "`Pagination=header`: pages staged", "page": "`Pagination=page`: nothing staged"}
    lines = [
        "## Resuming a first sync: the cost of staging its pages"
        + (f", at {args.rate}B/s" if args.rate else ", on loopback") + " (issue 26)",
        "",
        f"`bench/staging.py --records {args.records} --pages {args.pages} --runs {args.runs}"
        + (f" --rate {args.rate}" if args.rate else "") + "` "
        f"({datetime.date.today().isoformat()}, the project's 2-core machine, ext4, release build): the same listing of "
        f"{args.records:,} records ({total:,} B) in {args.pages} pages on loopback nginx"
        + (f" sending at most {args.rate}B/s per response (`limit_rate`)" if args.rate else "") + ", synced first from no state by "
        "`syncd --once`, once by `Next-Page:` headers (a listing that can resume: every page but the last is staged in the "
        "state database with its resume point, and the staging deleted by the listing's commit) and once by page "
        "number without `Delta=` (one that starts over: nothing staged; one request more, the empty page that ends it). "
        f"Alternating, medians of {args.runs} runs each. Written is `ru_oublock` × 512 (/proc/PID/io's `write_bytes`); the "
        "state database is `state.db` with its WAL after the run.",
        "",
        "| first sync | wall | CPU | written to storage | state database after |",
        "|---|---|---|---|---|",
    ]
    for mode in ("header", "page"):
        r = rows[mode]
        lines.append(f"| {label[mode]} | {med(x['wall'] for x in r) * 1000:.0f} ms | {med(x['cpu'] for x in r) * 1000:.0f} ms | "
                     f"{med(x['written'] for x in r) / 2**20:.2f} MiB | {med(x['state'] for x in r) / 2**20:.2f} MiB |")
    h, p = rows["header"], rows["page"]
    extra = med(x["written"] for x in h) - med(x["written"] for x in p)
    lines += ["", f"Staging wrote {extra / 2**20:.2f} MiB more ({extra / total:.2f}× the listing's bytes) and took "
              f"{med(x['wall'] for x in h) / med(x['wall'] for x in p):.2f}× the wall time.", ""]
    section = "\n".join(lines) + "\n"
    put_section(section)
    return section


if __name__ == "__main__":
    main()
