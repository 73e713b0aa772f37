#!/usr/bin/env bash
# A local one-record edit (`syncctl put`) on the 1M-record listing, in a running daemon (issue 12: "a
# one-record edit of a 1M-record cache costs one sequential copy, not a reparse"). For each build
# directory given (default .build/release), starts the daemon on a fresh state, waits for the first sync,
# then times PUTS puts of records spread over the listing (wall time from syncctl's start to its answer,
# which comes after the outbox commit and the rewritten cache file) and reads the daemon's /proc/PID/io
# around each: write_bytes (bytes it caused to be written to storage), rchar and wchar (bytes through its
# read/write-like system calls, copy_file_range(2) included). nginx refuses the pushes (405): each change
# is parked and stays in the outbox, so later puts rewrite one more chunk each.
# Usage: bench/local-put.sh [BUILD_DIR...]; prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$ROOT/bench/out/local-put
DATA=$ROOT/bench/data
PUTS=${PUTS:-5}
mkdir -p "$WORK" "$DATA"
[ -f "$DATA/1m.json" ] || python3 bench/make-listing.py 1000000 "$DATA/1m.json"
[ -f "$DATA/100k.json" ] || python3 bench/make-listing.py 100000 "$DATA/100k.json"
. bench/nginx.sh
[ $# -gt 0 ] || set -- "$ROOT/.build/release"
SIZE=$(stat -c %s "$DATA/1m.json")
io() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/io"; }

echo "| build | put | wall (ms) | write_bytes (MiB) | × listing | rchar (MiB) | wchar (MiB) |"
echo "|---|---|---|---|---|---|---|"
for BIN in "$@"; do
    setup_config local 1m.json
    printf 'Writable=yes\n' >> "$WORK/local/etc/sources.d/posts.source"
    "$BIN/syncd" --config-dir "$WORK/local/etc" 2>"$WORK/local.log" & DAEMON=$!
    SOCK=$WORK/local/run/io.syncd.Manager
    for _ in $(seq 1200); do grep -q 'posts: synced' "$WORK/local.log" && [ -S "$SOCK" ] && break; sleep 0.1; done
    sync
    for n in $(seq "$PUTS"); do
        id=$(( n * 1000000 / (PUTS + 1) ))
        W0=$(io "$DAEMON" write_bytes); R0=$(io "$DAEMON" rchar); C0=$(io "$DAEMON" wchar); T0=$(date +%s%N)
        echo "{\"id\":$id,\"title\":\"Post $id (edited locally)\"}" | "$BIN/syncctl" --socket "$SOCK" put posts - >/dev/null
        T1=$(date +%s%N); W1=$(io "$DAEMON" write_bytes); R1=$(io "$DAEMON" rchar); C1=$(io "$DAEMON" wchar)
        grep -q "\"title\":\"Post $id (edited locally)\"" "$WORK/local/cache/default/posts.json"
        awk -v b="$BIN" -v n="$n" -v t=$(( (T1 - T0) / 1000000 )) -v w=$((W1 - W0)) -v r=$((R1 - R0)) -v c=$((C1 - C0)) -v s="$SIZE" \
            'BEGIN { printf "| %s | %d | %d | %.1f | %.2f× | %.1f | %.1f |\n", b, n, t, w / 1048576, w / s, r / 1048576, c / 1048576 }'
        sleep 1   # the refused push parks the change and rewrites the file once more: let it pass
    done
    kill "$DAEMON"; wait "$DAEMON" 2>/dev/null || true; DAEMON=
done
