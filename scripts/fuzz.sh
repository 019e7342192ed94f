#!/bin/sh
# Builds the libFuzzer targets (clang, AddressSanitizer and UBSan) into build-fuzz/ (or
# GCR_FUZZ_DIR) and runs each for SECONDS (default 20) from its seed corpus
# (test/fuzz/corpus/<target>/, plus the project's own sample files) and what earlier runs added
# to <dir>/corpus/<target>/, as many at a time as there are CPUs (libFuzzer runs one per
# process). A crash, a leak, a failed property or a run past the RSS limit fails the script
# (after the other targets have run) with the input saved under <dir>/findings/. Prints each
# target's executions and coverage, in order.
#
#   scripts/fuzz.sh [SECONDS [TARGET...]]   only the named targets (default: every one)
#
# The build is the one scripts/test.sh runs the sanitized suite from (the same configuration:
# the libraries are compiled once for both); GCR_FUZZ_DIR=build-asan uses that tree, and builds
# nothing when it is up to date.
#
# The environment may change the defaults: GCR_FUZZ_DIR (the build directory, build-fuzz),
# GCR_FUZZ_MAX_LEN (the largest input, 65536 bytes; the loader-cache targets take up to 16 MiB,
# the cache's own limit), GCR_FUZZ_RSS_MB (the RSS, and the largest allocation, that fails
# the run: 2048) and GCR_FUZZ_JOBS (targets run at once: the CPUs). For example, the loader
# cache for 10 minutes with inputs up to 1 MiB:
#   GCR_FUZZ_MAX_LEN=1048576 GCR_FUZZ_RSS_MB=512 scripts/fuzz.sh 600 ldcache elf_library
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-20}
[ $# -gt 0 ] && shift
B=${GCR_FUZZ_DIR:-build-fuzz}
MAX_LEN=${GCR_FUZZ_MAX_LEN:-65536}
RSS_MB=${GCR_FUZZ_RSS_MB:-2048}
JOBS=${GCR_FUZZ_JOBS:-$(nproc)}
[ "$JOBS" -ge 1 ] || JOBS=1
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
LOG=$LOGS/build.log
scripts/configure-sanitized.sh "$B" >"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }
if [ $# -gt 0 ]; then
  TARGETS=$(for t in "$@"; do printf 'fuzz-%s ' "$t"; done)
else
  TARGETS=fuzzers
fi
# shellcheck disable=SC2086 # one word per target
cmake --build "$B" --target $TARGETS >"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }

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
# The targets named, or every one test/fuzz/CMakeLists.txt builds.
if [ $# -eq 0 ]; then
  # shellcheck disable=SC2046 # one word per target
  set -- $(for exe in "$B"/test/fuzz/fuzz-*; do echo "${exe##*/fuzz-}"; done)
fi
# Runs TARGET from its corpus (seeds copied in first), its output in $LOGS/TARGET.log.
fuzz() {
  work="$B/corpus/$1"
  mkdir -p "$work"
  [ -d "test/fuzz/corpus/$1" ] && cp test/fuzz/corpus/"$1"/* "$work"/
  for seed in $(extra_seeds "$1" || true); do cp "$seed" "$work/"; done
  "$B/test/fuzz/fuzz-$1" -max_total_time="$SECONDS_EACH" -timeout=10 \
    -rss_limit_mb="$RSS_MB" -max_len="$MAX_LEN" -print_final_stats=1 \
    -artifact_prefix="$B/findings/$1-" "$work" >"$LOGS/$1.log" 2>&1
}
# JOBS targets at a time (they all run for SECONDS); each one's line once its group is done.
while [ $# -gt 0 ]; do
  group="" n=0
  while [ $# -gt 0 ] && [ "$n" -lt "$JOBS" ]; do
    fuzz "$1" &
    group="$group $1:$!" n=$((n + 1))
    shift
  done
  for job in $group; do
    target=${job%:*}
    if wait "${job##*:}"; then
      runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOGS/$target.log")
      cov=$(grep -o 'cov: [0-9]*' "$LOGS/$target.log" | tail -1)
      echo "fuzz.sh: ok: $target ($runs runs, $cov)"
    else
      tail -40 "$LOGS/$target.log" >&2 || true
      echo "fuzz.sh: FAIL: $target (input in $B/findings/)" >&2
      status=1
    fi
  done
done
exit $status
