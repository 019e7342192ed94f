#!/bin/sh
# Runs README's commands as a user types them: every fenced `sh` block of README.md, then those
# of each docs/*.md (files by name, each file's blocks in order), in a fresh clone of this
# checkout (no build output), each under `sh -eu` with nothing of ours in its environment
# (env -i: a plain PATH, a HOME of its own). A block whose line above is
# `<!-- readme-test: skip: REASON -->` is not run; usage synopses are fenced `text`, not `sh`.
# Prints each block it ran or skipped (and why) with its file and line; fails on the first block
# that fails, showing what it printed, or whose output holds a compiler warning. What the blocks
# install (`cmake --install`, a package) is removed afterwards. Needs root: the blocks install
# packages and run containers. README's package block is not run here: scripts/test-packages.sh
# (the packages stage) runs it as typed, in a fresh clone, and README marks it so. The blocks'
# HOME may name a compiler cache (below): a cache answers only what it compiled from the same
# sources and flags, and replays the warnings with the objects.
set -eu
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/gcr-readme-XXXXXX)
SRC=$WORK/gpu-container-runtime
cleanup() {
  if dpkg -s gpu-container-runtime >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y gpu-container-runtime >/dev/null 2>&1 || true
  fi
  if [ -f "$SRC/build/install_manifest.txt" ]; then
    xargs rm -f <"$SRC/build/install_manifest.txt"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
git clone -q "$(pwd)" "$SRC"
README=$SRC/README.md  # the blocks of the clone they run in
mkdir -p "$WORK/blocks" "$WORK/home"
# A user who built before has a warm compiler cache: where scripts/test.sh keeps one
# (CCACHE_DIR), the blocks' HOME gets a ccache.conf naming it and where it logs its answers, so
# README's builds take what the suite compiled with the same flags, and the suite counts them.
# Its base directory, /tmp, holds this clone and the trees scripts/package.sh builds in.
if [ -n "${CCACHE_DIR:-}" ]; then
  scripts/ccache-home.sh "$WORK/home"
fi

# One file per block, named by its document's place (README.md first, then docs/*.md by name;
# NN.name holds the document's path) and the line of its opening fence; a skipped block's file
# holds the reason. A fenced block's indentation (inside a list item) is taken off its lines.
docs=0
for doc in "$README" "$SRC"/docs/*.md; do
  [ -f "$doc" ] || continue
  docs=$((docs + 1))
  id=$(printf '%02d' "$docs")
  printf '%s\n' "${doc#"$SRC"/}" >"$WORK/blocks/$id.name"
  awk -v dir="$WORK/blocks" -v id="$id" '
  function name(n) { return sprintf("%s/%s-%05d", dir, id, n) }
  in_block && $0 ~ "^" indent "```[ \t]*$" { in_block = 0; close(file); next }
  in_block { sub("^" indent, ""); print > file; next }
  /^[ \t]*```sh[ \t]*$/ {
    indent = $0; sub(/```sh[ \t]*$/, "", indent)
    if (skip != "") { print skip > (name(NR) ".skip"); close(name(NR) ".skip") }
    file = name(NR) ".sh"; printf "" > file; in_block = 1; skip = ""; next
  }
  /<!-- readme-test: skip: .* -->/ {
    skip = $0; sub(/.*<!-- readme-test: skip: /, "", skip); sub(/ -->.*/, "", skip); next
  }
  NF { skip = "" }
  ' "$doc"
done

ran=0
skipped=0
for block in "$WORK"/blocks/*.sh; do
  id=$(basename "$block" .sh)
  where="$(cat "$WORK/blocks/${id%%-*}.name") line $(echo "${id#*-}" | sed 's/^0*//')"
  if [ -f "${block%.sh}.skip" ]; then
    echo "test-readme: skipped $where: $(cat "${block%.sh}.skip")"
    skipped=$((skipped + 1))
    continue
  fi
  started=$(date +%s)
  if ! (cd "$SRC" && env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME="$WORK/home" LANG=C.UTF-8 sh -eu "$block" </dev/null >"$WORK/out" 2>&1); then
    cat "$WORK/out" >&2
    echo "test-readme: FAIL: $where:" >&2
    sed 's/^/  /' "$block" >&2
    exit 1
  fi
  # What a user's build prints must be clean: a compiler warning fails as -Werror would.
  if ! scripts/compiler-warnings.sh "$WORK/out" >&2; then
    echo "test-readme: FAIL: $where: the compiler warns (above):" >&2
    sed 's/^/  /' "$block" >&2
    exit 1
  fi
  echo "test-readme: ran $where in $(($(date +%s) - started)) s: $(head -n 1 "$block")"
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "test-readme: FAIL: no sh block found in README.md" >&2; exit 1; }
echo "test-readme: $ran blocks of README.md and docs/ ran, $skipped skipped (reasons above)"
