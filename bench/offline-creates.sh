#!/usr/bin/env bash
# Offline creates (issue 24, item 4): with the server unreachable, each `syncctl put` of a new record must
# cost the same whatever is already queued. For each build directory given (default .build/release), starts
# a daemon with two writable sources (posts and users, 100-record listings), waits for their first sync, stops
# the server (connection refused from then on), then times CREATES puts of new records (no ID: each gets a
# UUID) on posts and, after every 100th, one put on users. Wall time from syncctl's start to its answer, which
# comes after the outbox commit and, for a cache file up to 256 KiB, its rewrite (a larger file is rewritten once
# for a burst, 250 ms after its first change: docs/local-changes.md). With several build directories the daemons run
# side by side and the puts alternate between them, so a busy machine weighs on each build alike.
# Checks every cache file at the end (a complete document holding every record put).
# Usage: bench/offline-creates.sh [BUILD_DIR...]; CREATES (default 10000), OUT (work folder); prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${OUT:-$ROOT/bench/out/offline-creates}
DATA=$ROOT/bench/data
CREATES=${CREATES:-10000}
mkdir -p "$WORK" "$DATA"
[ -f "$DATA/small.json" ] || python3 bench/make-listing.py 100 "$DATA/small.json"
. bench/nginx.sh
[ $# -gt 0 ] || set -- "$ROOT/.build/release"

DAEMONS=()
trap 'kill $NGINX "${DAEMONS[@]}" 2>/dev/null || true' EXIT
n=0
for BIN in "$@"; do
    n=$((n + 1))
    setup_config "creates$n" small.json small.json
    for f in "$WORK/creates$n/etc/sources.d/"*.source; do printf 'Writable=yes\n' >> "$f"; done
    "$BIN/syncd" --config-dir "$WORK/creates$n/etc" 2>"$WORK/creates$n.log" & DAEMONS+=($!)
done
n=0
for BIN in "$@"; do
    n=$((n + 1))
    for _ in $(seq 600); do
        [ "$(grep -c ': synced' "$WORK/creates$n.log")" -ge 2 ] && [ -S "$WORK/creates$n/run/io.syncd.Manager" ] && break
        sleep 0.1
    done
done
kill "$NGINX"; wait "$NGINX" 2>/dev/null || true   # from here on the server refuses connections

python3 - "$CREATES" "$WORK" "$@" <<'PY'
import json, statistics, subprocess, sys, time
creates, work, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
sockets = [f"{work}/creates{i + 1}/run/io.syncd.Manager" for i in range(len(bins))]
posts = [[] for _ in bins]
users = [[] for _ in bins]

def put(i, source, record):
    start = time.perf_counter()
    subprocess.run([f"{bins[i]}/syncctl", "--socket", sockets[i], "put", source, "-"], input=json.dumps(record).encode(),
                   stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000

for k in range(creates):
    for i in range(len(bins)):
        posts[i].append(put(i, "posts", {"title": f"Offline post {k}", "body": "written while the server is unreachable"}))
        if k % 100 == 99:
            users[i].append(put(i, "users", {"name": f"Offline user {k}"}))

print("| build | creates | first 100: median / mean (ms) | last 100: median / mean (ms) | last ÷ first (mean) | slowest put (ms) | other source, slowest (ms) | verdict |")
print("|---|---|---|---|---|---|---|---|")
for i, b in enumerate(bins):
    first, last = posts[i][:100], posts[i][-100:]
    ratio = statistics.mean(last) / statistics.mean(first)
    ok = ratio <= 1.5 and max(posts[i]) < 50 and max(users[i], default=0) < 50
    print(f"| {b} | {creates} | {statistics.median(first):.1f} / {statistics.mean(first):.1f} | "
          f"{statistics.median(last):.1f} / {statistics.mean(last):.1f} | {ratio:.2f}× | {max(posts[i]):.1f} | "
          f"{max(users[i], default=0):.1f} | {'met' if ok else '**missed**'} |")
    with open(f"{work}/creates{i + 1}/times.json", "w") as f:
        json.dump({"posts": posts[i], "users": users[i]}, f)
    # The cache file: one complete document with the listing and every record put (a rewrite scheduled for the
    # last burst shows within moments).
    for source, count in (("posts", 100 + creates), ("users", 100 + creates // 100)):
        for _ in range(100):
            doc = json.load(open(f"{work}/creates{i + 1}/cache/default/{source}.json"))
            if len(doc["records"]) == count:
                break
            time.sleep(0.05)
        assert len(doc["records"]) == count and len(doc["pending"]) == count - 100, (b, source, len(doc["records"]))
PY
