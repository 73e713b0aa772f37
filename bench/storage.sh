#!/usr/bin/env bash
# The storage benchmark of issue 12 ("write each byte once"): nginx on loopback; side by side with
# curl -o, a conditional curl, curl|jq|mv and a Python fetch-parse-rename script it measures
#  - the `--once` right after a first sync (a 304) vs a conditional curl (100k records, hyperfine, and
#    interleaved by bench/ab-once.py);
#  - 1M records: disk at rest and at peak (state + cache, WAL included, sampled every 5 ms), peak RSS,
#    and bytes written to disk (/proc/PID/io write_bytes) per byte of listing for the first sync, an
#    unchanged re-sync (304), an identical listing served as a 200, a one-record change on the server
#    and a local one-record edit (`syncctl put`) in a running daemon;
#  - the daemon's RSS idle with two small sources, and 5 s after refreshing 300k records.
# Writes the figures into docs/benchmarks.md (section "Storage"). Called by bench/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/.build/release}
WORK=$ROOT/bench/out/storage
DATA=$ROOT/bench/data
RUNS=${RUNS:-10}
mkdir -p "$WORK" "$DATA"
for n in 100k:100000 300k:300000 1m:1000000 small:100; do
    [ -f "$DATA/${n%%:*}.json" ] || python3 bench/make-listing.py "${n##*:}" "$DATA/${n%%:*}.json"
done
. bench/nginx.sh
M="python3 $ROOT/bench/measure.py"
OUT=$WORK/results; rm -rf "$OUT"; mkdir -p "$OUT"

# 1. The --once right after a first sync (the first run's leftovers are its cost) vs a conditional curl.
setup_config after 100k.json
URL=http://127.0.0.1:$PORT/100k.json
curl -s -o /dev/null --etag-save "$WORK/etag.txt" "$URL"
setup_config first 100k.json
hyperfine --warmup 1 --runs "$RUNS" --export-json "$OUT/after.json" \
    -n "curl -o (transfer floor)" --prepare "true" "curl -s -o $WORK/curl.out $URL" \
    -n "syncd --once (first sync)" --prepare "rm -rf $WORK/first/state $WORK/first/cache" \
    "$BIN/syncd --once --config-dir $WORK/first/etc" \
    -n "curl --etag-compare (conditional)" --prepare "true" "curl -s -o /dev/null --etag-compare $WORK/etag.txt $URL" \
    -n "syncd --once right after a first sync" \
    --prepare "rm -rf $WORK/after/state $WORK/after/cache; $BIN/syncd --once --config-dir $WORK/after/etc" \
    "$BIN/syncd --once --config-dir $WORK/after/etc" >/dev/null
# 1b. The same 304 row interleaved: in each round a first sync (untimed), the `--once` after it and a conditional
# curl, so that both timed runs follow the same first sync (hyperfine runs curl's block warm, each syncd run
# after its prepare's 100 ms first sync).
python3 bench/ab-once.py after "$URL" "$((RUNS * 3))" "$BIN/syncd" > "$OUT/ab-after.txt"

# 2. 1M records, one process each; the served copy big.json is ours to touch and edit.
cp "$DATA/1m.json" "$WWW/big.json"
BIG=http://127.0.0.1:$PORT/big.json
setup_config big big.json
D=$WORK/big/state,$WORK/big/cache
$M --dirs "$D" -- "$BIN/syncd" --once --config-dir "$WORK/big/etc" > "$OUT/syncd-first.json"
$M --dirs "$D" -- "$BIN/syncd" --once --config-dir "$WORK/big/etc" > "$OUT/syncd-304.json"
touch -d '+1 minute' "$WWW/big.json"   # new ETag, same bytes: an identical 200
$M --dirs "$D" -- "$BIN/syncd" --once --config-dir "$WORK/big/etc" > "$OUT/syncd-200.json"
sed -i 's/"title":"Post 500000"/"title":"Post 500000 (edited)"/' "$WWW/big.json"
$M --dirs "$D" -- "$BIN/syncd" --once --config-dir "$WORK/big/etc" > "$OUT/syncd-one.json"
cp "$DATA/1m.json" "$WWW/big.json"
B=$WORK/base; rm -rf "$B"; mkdir -p "$B"
$M --dirs "$B" -- curl -s -o "$B/curl.json" --etag-save "$B/etag" "$BIG" > "$OUT/curl-first.json"
$M --dirs "$B" -- curl -s -o "$B/curl.json" --etag-compare "$B/etag" "$BIG" > "$OUT/curl-304.json"
rm -f "$B"/*
$M --dirs "$B" -- sh -c "curl -s $BIG | jq -c . > $B/jq.tmp && mv $B/jq.tmp $B/jq.json" > "$OUT/jq-first.json"
rm -f "$B"/*
cat > "$WORK/baseline.py" <<PY
import json, os, sys, urllib.request
body = urllib.request.urlopen(sys.argv[1]).read()
records = json.loads(body)
with open(sys.argv[2] + ".tmp", "w") as f:
    json.dump(records, f, separators=(",", ":")); f.flush(); os.fsync(f.fileno())
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
PY
$M --dirs "$B" -- python3 "$WORK/baseline.py" "$BIG" "$B/py.json" > "$OUT/py-first.json"

# 2b. A local one-record edit (`syncctl put`) on the 1M listing, in a running daemon: the bytes the daemon
# writes between the put's start and the cache file showing the edit (the outbox commit, then the file's
# rewrite: a file over 256 KiB is rewritten once for a burst of changes, within about half a second after the
# put answers, syncctl(1)). The push it triggers later goes to nginx, which refuses writes: not measured.
setup_config local big.json
printf 'Writable=yes\n' >> "$WORK/local/etc/sources.d/posts.source"
"$BIN/syncd" --config-dir "$WORK/local/etc" 2>"$WORK/local.log" & DAEMON=$!
SOCK=$WORK/local/run/io.syncd.Manager
for _ in $(seq 1200); do grep -q 'posts: synced' "$WORK/local.log" && [ -S "$SOCK" ] && break; sleep 0.1; done
written() { awk '/^write_bytes/ {print $2}' "/proc/$DAEMON/io"; }
W0=$(written); T0=$(date +%s%N)
echo '{"id":500000,"title":"Post 500000 (edited locally)"}' | "$BIN/syncctl" --socket "$SOCK" put posts - >/dev/null
T1=$(date +%s%N)
# The edit in the file apps read (polled: up to 30 s, then the benchmark stops here).
shown() { grep -q '"title":"Post 500000 (edited locally)"' "$WORK/local/cache/default/posts.json"; }
for _ in $(seq 3000); do shown && break; sleep 0.01; done
shown || { echo "storage.sh: the local edit never reached the cache file; see $WORK/local.log" >&2; exit 1; }
T2=$(date +%s%N); W2=$(written)
printf '{"wall_s": %s, "shown_s": %s, "write_bytes": %s}\n' "$(( (T1 - T0) / 1000000 ))e-3" "$(( (T2 - T0) / 1000000 ))e-3" \
    "$((W2 - W0))" > "$OUT/syncd-put.json"
kill "$DAEMON"; wait "$DAEMON" 2>/dev/null || true; DAEMON=

# 3. The daemon's resident memory: idle with two small sources; 5 s after refreshing 300k records.
. bench/daemon-rss.sh
setup_config idle small.json small.json
rss_after idle > "$OUT/rss-idle"
setup_config r300 300k.json
rss_after r300 > "$OUT/rss-300k"

python3 bench/storage-report.py "$OUT" "$DATA/1m.json" "$RUNS"
