#!/usr/bin/env bash
# `arena plan` on the largest shipped layouts: wall time and peak memory of the binary, without
# a device (placement checked on addresses alone) and with `--device host` (every rank's slab
# allocated and checked in real memory, what plan did before). Rounds interleave the two.
# Run from the repository root after `cargo build --release`; prints the table rows.
set -euo pipefail
bin=target/release/arena
rounds=${ROUNDS:-3}
layouts=("deepseek-v3 --tp 8 --ep 8" "deepseek-v3 --pp 32" "deepseek-v3 --tp 8 --ep 8 --pp 8")
measure() { /usr/bin/time -f "%e %M" "$bin" plan "$@" 2>&1 >/dev/null | tail -1; }
for layout in "${layouts[@]}"; do
  best_new=""; best_host=""
  for r in $(seq "$rounds"); do
    # shellcheck disable=SC2086
    new=$(measure $layout)
    best_new=$(printf '%s\n%s\n' "$best_new" "$new" | grep . | sort -n | head -1)
    if [ "${HOST:-1}" = 1 ] && [ "$r" = 1 ]; then
      # shellcheck disable=SC2086
      best_host=$(timeout 120 /usr/bin/time -f "%e %M" "$bin" plan $layout --device host 2>&1 >/dev/null | tail -1 || echo "timeout -")
    fi
  done
  read -r t m <<<"$best_new"
  read -r ht hm <<<"${best_host:-- -}"
  printf '| `plan %s` | %s s | %.1f MB | %s s | %s MB |\n' "$layout" "$t" "$(echo "$m/1024" | bc -l)" "$ht" \
    "$( [ "$hm" = - ] && echo - || printf '%.0f' "$(echo "$hm/1024" | bc -l)")"
done
