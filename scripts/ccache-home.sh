#!/bin/sh
# Gives the home directory DIR a ccache.conf naming the compiler cache in effect here (what ccache
# answers: $CCACHE_DIR, or the caller's own configuration), its size, the options and the
# sloppiness it leaves out of its hash, and where it logs its answer for each compilation
# ($CCACHE_STATSLOG or the configuration's stats_log), with base directory /tmp and paths hashed
# without the working directory. For a build run as a user types it, `env -i HOME=DIR`, in a
# clone under /tmp (README's blocks, scripts/package.sh's trees): it takes what the suite's builds
# of the same flags compiled, and the suite counts it. Does nothing where ccache is not installed.
#   scripts/ccache-home.sh DIR
set -eu
command -v ccache >/dev/null || exit 0
mkdir -p "$1/.config/ccache"
{
  printf 'cache_dir = %s\nbase_dir = /tmp\nhash_dir = false\n' "$(ccache -k cache_dir)"
  printf 'max_size = %s\nstats_log = %s\n' "$(ccache -k max_size)" "$(ccache -k stats_log)"
  printf 'ignore_options = %s\nsloppiness = %s\n' "$(ccache -k ignore_options)" "$(ccache -k sloppiness)"
} >"$1/.config/ccache/ccache.conf"
