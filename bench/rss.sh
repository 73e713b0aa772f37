#!/usr/bin/env bash
# The daemon's resident memory alone (the RSS rows of bench/storage.sh, without the rest): idle with
# two small sources, and 5 s after refreshing 300k records, RUNS times each (default 3); prints VmRSS
# and bench/smaps.py's breakdown (executable, each shared library, heap, anonymous) of the last run.
# Usage: bench/rss.sh   (BIN defaults to the release build, .build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/.build/release}
WORK=$ROOT/bench/out/rss
DATA=$ROOT/bench/data
RUNS=${RUNS:-3}
mkdir -p "$WORK" "$DATA"
for n in 100k:100000 300k:300000 small:100; do
    [ -f "$DATA/${n%%:*}.json" ] || python3 bench/make-listing.py "${n##*:}" "$DATA/${n%%:*}.json"
done
. bench/nginx.sh
. bench/daemon-rss.sh
for run in $(seq "$RUNS"); do
    setup_config idle small.json small.json
    echo "idle, two small sources (run $run): VmRSS anonymous binary libraries (KiB): $(rss_after idle)"
    setup_config r300 300k.json
    echo "5 s after refreshing 300k records (run $run): $(rss_after r300)"
done
echo "--- idle, two small sources:"; cat "$WORK/idle.smaps"
echo "--- 5 s after refreshing 300k records:"; cat "$WORK/r300.smaps"
