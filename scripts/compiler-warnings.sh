#!/bin/sh
# Prints the compiler warnings in the build logs named (GCC's and clang's `FILE:LINE[:COLUMN]:
# warning:`, and theirs about the command line), each line after its log's name; succeeds when
# there is one, fails when there is none: what -Werror would have stopped. A log that cannot be
# read is an error (status 2).
set -eu
found=1
for log in "$@"; do
  [ -r "$log" ] || { echo "compiler-warnings: cannot read $log" >&2; exit 2; }
  warnings=$(grep -E '(:[0-9]+(:[0-9]+)?|^(cc1(plus)?|clang(\+\+)?|g\+\+|gcc)): warning: ' "$log" || true)
  if [ -n "$warnings" ]; then
    printf '%s\n' "$warnings" | sed "s|^|$log: |"
    found=0
  fi
done
exit "$found"
