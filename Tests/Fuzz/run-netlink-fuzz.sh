#!/bin/sh
# Fuzzes the rtnetlink parser and LinkStateTracker with libFuzzer for SECONDS
# (default 30) on a temporary copy of Tests/Fuzz/netlink-corpus (seeded from
# the captured datagrams in Tests/SyncCoreTests/Network/Fixtures).
# Exits non-zero if the fuzzer finds a crash; the crashing input is left in
# .build/fuzz-netlink-artifacts/.
set -eu
seconds=${1:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p .build .build/fuzz-netlink-artifacts
"${SWIFTC:-swiftc}" -sanitize=fuzzer,address -parse-as-library -O \
    Sources/SyncCore/Network/*.swift Tests/Fuzz/NetlinkParserFuzz.swift \
    -o .build/fuzz-netlink
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT INT TERM
cp Tests/Fuzz/netlink-corpus/* "$corpus"/
.build/fuzz-netlink -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix=.build/fuzz-netlink-artifacts/ "$corpus"
