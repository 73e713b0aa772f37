#!/usr/bin/env bash
# The pull-sync benchmark of issue 2: nginx on loopback serves 100k- and 1M-record listings; one run
# measures side by side the transfer floor (curl -o), a curl|jq|mv timer-script baseline and
# `syncd --once` (first sync, unchanged re-sync), plus peak RSS for 1M records. Writes the figures
# into docs/benchmarks.md (section "Pull sync"). Usage: bench/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/.build/release}
WORK=$ROOT/bench/out
DATA=$ROOT/bench/data
RUNS=${RUNS:-10}
mkdir -p "$WORK" "$DATA"
[ -f "$DATA/100k.json" ] || python3 bench/make-listing.py 100000 "$DATA/100k.json"
[ -f "$DATA/1m.json" ] || python3 bench/make-listing.py 1000000 "$DATA/1m.json"

[ -f "$DATA/300k.json" ] || python3 bench/make-listing.py 300000 "$DATA/300k.json"
[ -f "$DATA/small.json" ] || python3 bench/make-listing.py 100 "$DATA/small.json"
. bench/nginx.sh

URL=http://127.0.0.1:$PORT/100k.json
setup_config first 100k.json
setup_config resync 100k.json
"$BIN/syncd" --once --config-dir "$WORK/resync/etc"
curl -s -o /dev/null --etag-save "$WORK/etag.txt" "$URL"

hyperfine --warmup 2 --runs "$RUNS" --export-json "$WORK/100k.json" \
    -n "curl -o (transfer floor)" "curl -s -o $WORK/curl.out $URL" \
    -n "curl | jq | mv (baseline)" "curl -s $URL | jq -c . > $WORK/jq.tmp && mv $WORK/jq.tmp $WORK/jq.json" \
    -n "syncd --once (first sync)" --prepare "rm -rf $WORK/first/state $WORK/first/cache" "$BIN/syncd --once --config-dir $WORK/first/etc" \
    -n "curl --etag-compare (conditional)" "curl -s -o /dev/null --etag-compare $WORK/etag.txt $URL" \
    -n "syncd --once (unchanged re-sync)" "$BIN/syncd --once --config-dir $WORK/resync/etc"

# 1M records: peak RSS (GNU time's "Maximum resident set size", KiB).
setup_config big 1m.json
BIG=http://127.0.0.1:$PORT/1m.json
rss() { /usr/bin/time -f '%M %e' "$@" 2>&1 >/dev/null | tail -1; }
SYNCD_1M=$(rss "$BIN/syncd" --once --config-dir "$WORK/big/etc")
JQ_1M=$(/usr/bin/time -f '%M %e' jq -c . "$DATA/1m.json" 2>&1 >/dev/null | tail -1)
PY_1M=$(/usr/bin/time -f '%M %e' python3 -c "import json,sys; json.load(open('$DATA/1m.json'))" 2>&1 | tail -1)

python3 - "$WORK/100k.json" "$SYNCD_1M" "$JQ_1M" "$PY_1M" "$RUNS" <<'PY'
import json, re, sys, datetime, platform, subprocess
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def ms(name): return results[name]["mean"] * 1000, results[name]["stddev"] * 1000
floor, _ = ms("curl -o (transfer floor)")
base, _ = ms("curl | jq | mv (baseline)")
first, _ = ms("syncd --once (first sync)")
cond, _ = ms("curl --etag-compare (conditional)")
resync, _ = ms("syncd --once (unchanged re-sync)")
def rss(field):
    kib, secs = field.split()
    return int(kib) / 1024, float(secs)
s1m, j1m, p1m = rss(sys.argv[2]), rss(sys.argv[3]), rss(sys.argv[4])
rows = "\n".join(f"| {name.replace('|', chr(92) + '|')} | {r['mean']*1000:.1f} ± {r['stddev']*1000:.1f} |" for name, r in results.items())
ok = lambda cond: "met" if cond else "**missed**"
section = f"""## Pull sync (issue 2)

Command: `make bench` (runs `bench/run.sh`: release build with the static Swift runtime, nginx on
loopback, hyperfine with {sys.argv[5]} runs after 2 warm-ups; listings from `bench/make-listing.py`).
Measured {datetime.date.today().isoformat()} on the project's 2-core machine.

100k records ({__import__('os').path.getsize('bench/data/100k.json')/1e6:.1f} MB), mean ± stddev in ms:

| command | time (ms) |
|---|---|
{rows}

| target | measured | verdict |
|---|---|---|
| first sync ≤ 4× `curl -o` | {first/floor:.1f}× ({first:.0f} ms vs {floor:.0f} ms) | {ok(first <= 4*floor)} |
| first sync ≥ 3× faster than curl+jq+mv | {base/first:.1f}× faster ({base:.0f} ms vs {first:.0f} ms) | {ok(base >= 3*first)} |
| unchanged re-sync ≤ 2× conditional curl | {resync/cond:.1f}× ({resync:.1f} ms vs {cond:.1f} ms) | {ok(resync <= 2*cond)} |

1M records ({__import__('os').path.getsize('bench/data/1m.json')/1e6:.0f} MB), peak RSS (GNU time `%M`):

| program | peak RSS | wall time |
|---|---|---|
| `syncd --once` (first sync) | {s1m[0]:.1f} MiB | {s1m[1]:.2f} s |
| `jq -c .` | {j1m[0]:.1f} MiB | {j1m[1]:.2f} s |
| `python3 json.load` | {p1m[0]:.1f} MiB | {p1m[1]:.2f} s |

Target: syncd ≤ 64 MiB: {ok(s1m[0] <= 64)}.

Notes: the first sync leaves its 20 MB write-ahead log un-checkpointed (closing does not fold it in); the
next refresh that changes nothing folds it into the database once (tens of ms), which hyperfine's
warm-up runs absorb, so the re-sync row is the steady state.

The unchanged re-sync is a whole process run, and both programs spend most of it starting:
`curl --version` takes about as long as the conditional request (6–7 ms), `syncd --version` about
7.6 ms (the static Swift runtime about 2 ms, the rest the shared libraries libcurl, libsystemd and
libsqlite3 bring in). What syncd does for the re-sync itself — configuration, lock, store, the
conditional request, recording the confirmation, checking and touching the cache file — takes about
4.7 ms. So this target sits at 2.0–2.2× here (1.7× in the first session, on another host); the
long-running daemon, syncd's normal mode, pays the start-up once. Each re-sync appends one 64 KiB page
to the write-ahead log, which every later process reads when it opens the store: a no-change refresh
folds the log in once it passes 1 MiB (with the earlier 8 MiB limit, back-to-back re-syncs grew from
13 to 20 ms as the log grew).
"""
sys.path.insert(0, "bench"); from docsection import put_section
put_section(section)
print(section)
PY

# Issue 29: the first sync against curl -o, interleaved, with CPU time and peak RSS, and the scanner's
# throughput (section "First sync against the transfer floor").
python3 bench/first-sync.py "http://127.0.0.1:$PORT" "$BIN"

# Issue 12: disk, bytes written and memory (section "Storage" of docs/benchmarks.md).
bench/storage.sh

# Issue 24: offline creates and `syncctl list` with a change pending (figures in docs/benchmarks.md,
# section "Local costs"; 1M records for the listing).
bench/offline-creates.sh
bench/list-pending.sh
