# Sourced by bench/storage.sh and bench/rss.sh (needs BIN, WORK, ROOT and a config made by setup_config).
# rss_after NAME: starts the daemon on $WORK/NAME/etc, waits for every source's first sync, then 5 s;
# prints "VmRSS anonymous binary libraries" (KiB) and leaves bench/smaps.py's full breakdown of the
# daemon's resident memory in $WORK/NAME.smaps.
rss_after() {
    "$BIN/syncd" --config-dir "$WORK/$1/etc" 2>"$WORK/$1.log" & DAEMON=$!
    local want; want=$(ls "$WORK/$1/etc/sources.d" | wc -l)
    for _ in $(seq 1200); do
        [ "$(grep -c 'synced\|not modified' "$WORK/$1.log" || true)" -ge "$want" ] && break; sleep 0.1
    done
    sleep 5
    python3 "$ROOT/bench/smaps.py" "$DAEMON" > "$WORK/$1.smaps"
    # VmRSS, then what it is made of (KiB): anonymous memory, the syncd binary's pages, shared libraries.
    awk '/VmRSS/ {printf "%s ", $2}' "/proc/$DAEMON/status"
    awk -v bin="$(readlink -f "$BIN/syncd")" '/^[0-9a-f]+-/ {name = $6} /^Rss:/ {
            if (name == bin) b += $2; else if (name ~ /\.so/) l += $2; else a += $2 }
        END {print a, b, l}' "/proc/$DAEMON/smaps"
    kill "$DAEMON"; wait "$DAEMON" 2>/dev/null || true; DAEMON=
}
