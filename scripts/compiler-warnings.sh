#!/bin/sh
# Prints the compiler warnings in the build logs named, each line after its log's name: GCC's
# and clang's `FILE:LINE:COLUMN: warning:`, and their drivers' own (`c++: warning:`,
# `x86_64-linux-gnu-g++-12: warning:`, `cc1plus: warning:`, `lto-wrapper: warning:`). Succeeds
# when there is one and fails (status 1) when there is none: what -Werror would have stopped. A
# log that cannot be read is an error (status 2). Colour codes (-fdiagnostics-color, which CMake
# adds under CMAKE_COLOR_DIAGNOSTICS) are taken out first.
set -eu
PATTERN=':[0-9]+:[0-9]+: warning: |^([^ :]*/)?((x86_64-linux-gnu-)?(cc|c\+\+|gcc|g\+\+)(-[0-9]+)?|clang(\+\+)?(-[0-9]+)?|cc1(plus)?|lto1|lto-wrapper): warning: '
found=1
for log in "$@"; do
  [ -r "$log" ] || { echo "compiler-warnings: cannot read $log" >&2; exit 2; }
  warnings=$(sed 's/\x1b\[[0-9;]*[mK]//g' "$log" | grep -E "$PATTERN") || true
  if [ -n "$warnings" ]; then
    printf '%s\n' "$warnings" | awk -v name="$log" '{ print name ": " $0 }'
    found=0
  fi
done
exit "$found"
