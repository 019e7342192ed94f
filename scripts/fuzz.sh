#!/bin/sh
# Builds the libFuzzer targets (clang, AddressSanitizer and UBSan) into build-fuzz/ and runs each
# for SECONDS (default 20) from its seed corpus (test/fuzz/corpus/<target>/, plus the project's
# own sample files). A crash, a leak or a failed property stops the script with the input saved
# under build-fuzz/findings/. Prints each target's executions and coverage.
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-20}
B=build-fuzz
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
CC=clang CXX=clang++ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGCR_FUZZ=ON \
  -DGCR_WERROR=ON -DBUILD_TESTING=OFF >"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }
cmake --build "$B" --target fuzzers >"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }

# Extra seeds: the files the project already has in each format.
extra_seeds() {
  case $1 in
    json | spec_view) ls test/data/golden/*/input.json ;;
    config) echo etc/config.toml ;;
    nvidia_compat) ls test/data/nvidia/*.toml ;;
    engines) ls etc/engines/*.toml etc/engines/*.json ;;
    ldcache) [ -f /etc/ld.so.cache ] && echo /etc/ld.so.cache ;;
    ld_so_conf) ls /etc/ld.so.conf /etc/ld.so.conf.d/*.conf 2>/dev/null ;;
    elf_library) ls /lib/x86_64-linux-gnu/libz.so.* /lib/i386-linux-gnu/libc.so.6 2>/dev/null ;;
  esac
}

mkdir -p "$B/findings"
status=0
# Every target test/fuzz/CMakeLists.txt builds.
for exe in "$B"/test/fuzz/fuzz-*; do
  target=${exe##*/fuzz-}
  work="$B/corpus/$target"
  mkdir -p "$work"
  [ -d "test/fuzz/corpus/$target" ] && cp test/fuzz/corpus/"$target"/* "$work"/
  for seed in $(extra_seeds "$target" || true); do cp "$seed" "$work/"; done
  if "$B/test/fuzz/fuzz-$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$B/findings/$target-" "$work" \
       >"$LOG" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG")
    cov=$(grep -o 'cov: [0-9]*' "$LOG" | tail -1)
    echo "fuzz.sh: ok: $target ($runs runs, $cov)"
  else
    tail -40 "$LOG" >&2
    echo "fuzz.sh: FAIL: $target (input in $B/findings/)" >&2
    status=1
  fi
done
exit $status
