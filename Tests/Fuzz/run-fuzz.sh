#!/bin/sh
# Fuzz RecordScanner with libFuzzer + AddressSanitizer.
# Usage: Tests/Fuzz/run-fuzz.sh [SECONDS]   (default 30; run from anywhere)
# Exits non-zero if the fuzzer finds a crash; crash inputs are left in .build/fuzz-artifacts/.
set -eu

seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

swiftc="${SWIFTC:-swiftc}"
binary=.build/fuzz-record-scanner
mkdir -p .build .build/fuzz-artifacts

"$swiftc" -sanitize=fuzzer,address -parse-as-library -O \
    Sources/SyncCore/JSON/*.swift Sources/SyncCore/Text/JSONText.swift Tests/Fuzz/RecordScannerFuzz.swift \
    -o "$binary"

# Run on a copy so the checked-in seed corpus stays small and reviewed.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM
cp Tests/Fuzz/corpus/* "$work"/

"$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -dict=Tests/Fuzz/json.dict -artifact_prefix=.build/fuzz-artifacts/ "$work"
