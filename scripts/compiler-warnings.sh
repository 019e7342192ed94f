#!/bin/sh
# Checks the build logs named for compiler warnings: GCC's and clang's `FILE:LINE:COLUMN:
# warning:`, and their drivers' own (`c++: warning:`, `x86_64-linux-gnu-g++-12: warning:`,
# `cc1plus: warning:`, `lto-wrapper: warning:`). Each warning is printed after its log's name,
# then one line saying so, and the check fails (status 1): what -Werror would have stopped. A
# log that cannot be read fails too (status 2). Colour codes (-fdiagnostics-color, which CMake
# adds under CMAKE_COLOR_DIAGNOSTICS) are taken out first. No warning: silent, status 0.
set -eu
PATTERN=':[0-9]+:[0-9]+: warning: |^([^ :]*/)?((x86_64-linux-gnu-)?(cc|c\+\+|gcc|g\+\+)(-[0-9]+)?|clang(\+\+)?(-[0-9]+)?|cc1(plus)?|lto1|lto-wrapper): warning: '
status=0
for log in "$@"; do
  [ -r "$log" ] || { echo "compiler-warnings: cannot read $log" >&2; exit 2; }
  warnings=$(sed 's/\x1b\[[0-9;]*[mK]//g' "$log" | grep -E "$PATTERN") || true
  if [ -n "$warnings" ]; then
    printf '%s\n' "$warnings" | awk -v name="$log" '{ print name ": " $0 }'
    echo "compiler-warnings: the compiler warns in $log (above)"
    status=1
  fi
done
exit "$status"
