#!/usr/bin/env bash
# Coverage-guided fuzzing of every target in tests/fuzz (see its README.md).
#   scripts/run_fuzz.sh BUILD_DIR TOTAL_SECONDS
# Each target runs TOTAL_SECONDS / <number of targets> seconds on a working
# copy of its seeds. Exits non-zero on the first finding, whose reproducer is
# left in BUILD_DIR/findings/.
set -euo pipefail
build=${1:-build-fuzz}
total=${2:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
targets=()
for src in "$root"/tests/fuzz/fuzz_*.cc; do
  targets+=("$(basename "$src" .cc)")
done
per=$(( total / ${#targets[@]} ))
(( per >= 1 )) || per=1
mkdir -p "$build/findings"
echo "fuzz: ${#targets[@]} targets x ${per} s (libFuzzer, ASan+UBSan)"
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  work="$build/corpus/$name"
  mkdir -p "$work"
  cp -n "$root/tests/fuzz/corpus/$name"/* "$work"/ 2>/dev/null || true
  log="$build/findings/$t.log"
  start=$(date +%s)
  if ! ZEUS_LOG_LEVEL=off "$build/bin/$t" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/findings/$t-" "$work" \
      >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $t found a problem (reproducer and log in $build/findings/)"
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz: $t clean: $runs inputs in $(( $(date +%s) - start )) s, corpus $(ls "$work" | wc -l) files"
done
