#!/usr/bin/env bash
# `syncctl list` with one local change pending (issue 24, item 5): paging through the local view must cost
# the same with one change pending as without. For each build directory given (default .build/release),
# starts a daemon on a listing of RECORDS records (default 1000000; the listing comes from
# bench/make-listing.py), waits for the first sync, then runs `syncctl list posts --json` RUNS times with
# nothing pending, queues one change (an update of a record in the middle; nginx refuses the push, so it
# stays pending), and runs it RUNS times again, alternating the builds run by run so a busy machine weighs
# on each alike. Each run's output must hold every record. Wall time from syncctl's start to its end.
# Usage: bench/list-pending.sh [BUILD_DIR...]; RECORDS, RUNS (default 3), OUT (work folder); prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${OUT:-$ROOT/bench/out/list-pending}
DATA=$ROOT/bench/data
RECORDS=${RECORDS:-1000000}
RUNS=${RUNS:-3}
LISTING=list-$RECORDS.json
mkdir -p "$WORK" "$DATA"
[ -f "$DATA/$LISTING" ] || python3 bench/make-listing.py "$RECORDS" "$DATA/$LISTING"
. bench/nginx.sh
[ $# -gt 0 ] || set -- "$ROOT/.build/release"

DAEMONS=()
trap 'kill $NGINX "${DAEMONS[@]}" 2>/dev/null || true' EXIT
n=0
for BIN in "$@"; do
    n=$((n + 1))
    setup_config "list$n" "$LISTING"
    printf 'Writable=yes\n' >> "$WORK/list$n/etc/sources.d/posts.source"
    "$BIN/syncd" --config-dir "$WORK/list$n/etc" 2>"$WORK/list$n.log" & DAEMONS+=($!)
    for _ in $(seq 3000); do grep -q 'posts: synced' "$WORK/list$n.log" && [ -S "$WORK/list$n/run/io.syncd.Manager" ] && break; sleep 0.1; done
done

python3 - "$RECORDS" "$RUNS" "$WORK" "$@" <<'PY'
import json, statistics, subprocess, sys, time
records, runs, work, bins = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
sockets = [f"{work}/list{i + 1}/run/io.syncd.Manager" for i in range(len(bins))]

def ctl(i, *args, data=None):
    start = time.perf_counter()
    done = subprocess.run([f"{bins[i]}/syncctl", "--socket", sockets[i], *args], input=data, stdout=subprocess.PIPE, check=True)
    return (time.perf_counter() - start), done.stdout

def listing(i):
    seconds, out = ctl(i, "list", "posts", "--json")
    shown = out.count(b'"id":')
    assert shown >= records, (bins[i], shown)
    return seconds

clean = [[] for _ in bins]
pending = [[] for _ in bins]
for _ in range(runs):
    for i in range(len(bins)):
        clean[i].append(listing(i))
middle = records // 2
for i in range(len(bins)):
    ctl(i, "put", "posts", "-", data=json.dumps({"id": middle, "title": f"Post {middle} (edited locally)"}).encode())
for _ in range(runs):
    for i in range(len(bins)):
        pending[i].append(listing(i))

print("| build | records | list, nothing pending (s) | list, 1 change pending (s) | ratio | verdict (≤ 1.2×) |")
print("|---|---|---|---|---|---|")
for i, b in enumerate(bins):
    a, p = statistics.median(clean[i]), statistics.median(pending[i])
    print(f"| {b} | {records} | {a:.2f} (runs {', '.join(f'{x:.2f}' for x in clean[i])}) | "
          f"{p:.2f} (runs {', '.join(f'{x:.2f}' for x in pending[i])}) | {p / a:.2f}× | {'met' if p <= 1.2 * a else '**missed**'} |")
PY
