#!/bin/sh
# Builds the .deb and the .rpm as README tells a user to, and checks them. README's package block
# (the `sh` block, in README.md or docs/*.md, below the line `<!-- readme-test: skip:
# scripts/test-packages.sh runs this block ... -->`; the README stage lists it as skipped, for
# this reason) runs here as typed, in a fresh clone of this checkout, under `sh -eu` with nothing
# of ours in its environment but LOGS (where scripts/package.sh keeps its two logs): it builds
# both packages, compiling the product once (the .deb with Debian's build flags; the .rpm
# packages that build's tree), and installs the .deb with apt. Then: no compiler warning in the
# logs (as -Werror would; the compiler cache replays a warning with the object), the .rpm's build
# compiled and linked nothing and holds the .deb's very executables (same GNU build IDs), lintian
# and rpm checks. The .rpm is installed, reinstalled and erased in a throw-away root; the .deb on
# this machine: install a previous version, edit the config, upgrade (the edit stays), run a
# container through the installed shim with real runc, remove (only the config stays), purge
# (nothing stays). Needs root; run after a build (it uses build/test/gcr-fixture for the test
# container).
set -eu
cd "$(dirname "$0")/.."
B=$(pwd)/${BUILD_DIR:-build}
fail() { echo "test-packages: FAIL: $*" >&2; exit 1; }
pass() { echo "test-packages: ok: $*"; }
WORK=$(mktemp -d /tmp/gcr-pkgtest-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

VERSION=$(scripts/version.sh)
CLONE=$WORK/gpu-container-runtime
git clone -q "$(pwd)" "$CLONE"
# README's package block, from the clone's README.md or docs/*.md, whichever holds it
# (indentation inside a list item taken off).
MARK='<!-- readme-test: skip: scripts/test-packages.sh runs this block'
set -- "$CLONE/README.md"
for doc in "$CLONE"/docs/*.md; do
  if [ -f "$doc" ]; then set -- "$@" "$doc"; fi
done
awk -v mark="$MARK" -v out="$WORK/block.sh" '
  FNR == 1 { in_block = 0; marked = 0 }
  in_block && $0 ~ "^" indent "```[ \t]*$" { in_block = 0; found++; next }
  in_block { sub("^" indent, ""); print > out; next }
  marked && /^[ \t]*```sh[ \t]*$/ {
    indent = $0; sub(/```sh[ \t]*$/, "", indent); printf "" > out; in_block = 1; marked = 0; next
  }
  index($0, mark) { marked = 1; next }
  NF { marked = 0 }
  END { exit found == 1 ? 0 : 1 }
' "$@" ||
  fail "README.md and docs/*.md have not exactly one sh block under a line starting '$MARK'"
grep -q 'scripts/package.sh' "$WORK/block.sh" ||
  fail "README's package block does not run scripts/package.sh"
# The blocks' HOME as scripts/test-readme.sh makes it: a ccache.conf naming the compiler cache in
# effect here (scripts/test.sh's, or when run alone the caller's) and where it logs its answers,
# base directory /tmp (the clone and package.sh's trees).
mkdir -p "$WORK/home"
scripts/ccache-home.sh "$WORK/home"
dpkg -P gpu-container-runtime >/dev/null 2>&1 || true  # what an aborted earlier run left
if ! (cd "$CLONE" && env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME="$WORK/home" LANG=C.UTF-8 LOGS="$WORK/logs" \
  sh -eu "$WORK/block.sh" </dev/null >"$WORK/out" 2>&1); then
  cat "$WORK/out" >&2
  sed 's/^/  /' "$WORK/block.sh" >&2
  fail "README's package block (above) failed in a fresh clone"
fi
rm -rf build-packages && mkdir build-packages
cp "$CLONE"/build-packages/* build-packages/
DEB=build-packages/gpu-container-runtime_${VERSION}_amd64.deb
RPM=build-packages/gpu-container-runtime-${VERSION}.x86_64.rpm
if [ ! -f "$DEB" ] || [ ! -f "$RPM" ]; then fail "README's package block built no $DEB and $RPM"; fi
installed=""
if grep -q '^apt install ' "$WORK/block.sh"; then
  installed=", the .deb installed with apt"
  [ "$(dpkg-query -W -f '${Version}' gpu-container-runtime 2>/dev/null)" = "$VERSION" ] ||
    fail "README's package block did not install the .deb ($VERSION)"
  dpkg -P gpu-container-runtime >/dev/null || fail "dpkg -P of the .deb README's block installed"
fi
scripts/compiler-warnings.sh "$WORK/logs/deb.log" "$WORK/logs/rpm.log" "$WORK/out" >&2 ||
  fail "the package builds' logs (above)"
pass "README's package block ran as typed in a fresh clone: $DEB and $RPM built with no compiler warning$installed"

# One compile for both: the .rpm's build packaged the .deb's tree, compiling and linking nothing
# (ninja's descriptions, or its commands were it verbose).
grep -q '^gpu-container-runtime.spec: packaging the compiled tree ' "$WORK/logs/rpm.log" ||
  fail "the .rpm was not packaged from the .deb's build tree ($WORK/logs/rpm.log)"
if grep -E 'Building (C|CXX) object|Linking (C|CXX) |\.o -c ' "$WORK/logs/rpm.log" >&2; then
  fail "the .rpm's build compiled or linked (above) what the .deb's had"
fi
pass "the .rpm packaged the .deb's build tree: nothing compiled twice"

lintian --fail-on error,warning "$DEB" 2>/dev/null || fail "lintian reports problems: lintian $DEB"
pass "lintian clean (remaining tags explained in deb/lintian-overrides)"

# The .rpm: same files, the config marked noreplace, the post-install message, the relations.
deb_files=$(dpkg-deb -c "$DEB")
rpm_files=$(rpm -qlp "$RPM")
for f in /usr/bin/gpu-container-runtime /usr/bin/gpu-ctk /usr/bin/nvidia-container-runtime \
         /usr/bin/nvidia-container-runtime.cdi /usr/bin/nvidia-container-runtime.legacy \
         /usr/bin/nvidia-container-runtime-hook /usr/bin/nvidia-ctk /usr/bin/nvidia-container-cli \
         /usr/bin/nvidia-cdi-hook \
         /usr/bin/gpu-device-plugin /usr/lib/gpu-container-runtime/gpu-cuda-probe \
         /etc/gpu-container-runtime/config.toml; do
  printf '%s\n' "$rpm_files" | grep -qx "$f" || fail "$f missing from the .rpm"
  printf '%s\n' "$deb_files" | grep -q " \.$f" || fail "$f missing from the .deb"
done
printf '%s\n' "$rpm_files" | grep -qx /usr/lib/systemd/system/gpu-device-plugin.service \
  || fail "the device plugin's unit is missing from the .rpm"
printf '%s\n' "$deb_files" | grep -q ' \./lib/systemd/system/gpu-device-plugin.service' \
  || fail "the device plugin's unit is missing from the .deb"
for f in systemd/system/gpu-cdi-refresh.service systemd/system/gpu-cdi-refresh.path \
         udev/rules.d/71-gpu-dev-char.rules; do
  printf '%s\n' "$rpm_files" | grep -qx "/usr/lib/$f" || fail "/usr/lib/$f missing from the .rpm"
  printf '%s\n' "$deb_files" | grep -q " \./lib/$f\$" || fail "/lib/$f missing from the .deb"
done
rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$RPM" | grep -qx '/etc/gpu-container-runtime/config.toml cn' \
  || fail "the .rpm's config.toml is not %config(noreplace)"
rpm -qp --scripts "$RPM" | grep -q 'gpu-ctk runtime configure' || fail "the .rpm has no post-install hint"
rpm -qp --requires "$RPM" | grep -q '(runc or crun)' || fail "the .rpm does not require runc or crun"
rpm -qp --conflicts "$RPM" | grep -q nvidia-container-toolkit || fail "the .rpm does not conflict with nvidia-container-toolkit"
rpm -qip "$RPM" | grep -q "^Version *: $VERSION" || fail "the .rpm's version is not $VERSION"
# README's links lead into docs/, installed beside it.
printf '%s\n' "$rpm_files" | grep -qx /usr/share/doc/gpu-container-runtime/docs/testing.md \
  || fail "docs/ is missing from the .rpm"
printf '%s\n' "$deb_files" | grep -q ' \./usr/share/doc/gpu-container-runtime/docs/testing.md' \
  || fail "docs/ is missing from the .deb"
pass "the .rpm holds the same files, noreplace config, scripts and relations"

# The .rpm in a throw-away root: files in place, an edited config kept across a reinstall
# (noreplace) and saved as .rpmsave on erase. Scriptlets need a shell inside the root: skipped.
R="$WORK/rpmroot"
rpm --root "$R" --initdb
rpm --root "$R" -i --nodeps --noscripts "$RPM" || fail "rpm -i into a throw-away root"
for f in /usr/bin/gpu-container-runtime /usr/bin/gpu-ctk; do
  [ -f "$R$f" ] || fail "$f not installed by the .rpm"
done
ls "$R"/usr/share/man/man1/gpu-ctk.1* >/dev/null 2>&1 || fail "gpu-ctk(1) not installed by the .rpm"
# The same executables in both packages (each stripped its own way): every ELF file of the .deb
# has, at its path in the .rpm, the same GNU build ID.
dpkg-deb -x "$DEB" "$WORK/debroot"
(cd "$WORK/debroot" && find . -type f) | sed 's|^\.||' >"$WORK/deb-regular-files"
build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: //p'; }
same=0
while read -r f; do
  id=$(build_id "$WORK/debroot$f")
  [ -n "$id" ] || continue
  [ "$(build_id "$R$f")" = "$id" ] || fail "$f: the .rpm's build ID is not the .deb's ($id)"
  same=$((same + 1))
done <"$WORK/deb-regular-files"
[ "$same" -ge 3 ] || fail "only $same executables with a build ID in the .deb"
pass "the .rpm's $same executables are the .deb's (same build IDs)"
[ -z "$(rpm --root "$R" -V --nodeps gpu-container-runtime)" ] || fail "rpm -V reports changes right after install"
sed -i 's/^log-level = "info"/log-level = "debug"/' "$R/etc/gpu-container-runtime/config.toml"
rpm --root "$R" -V --nodeps gpu-container-runtime | grep -q ' c /etc/gpu-container-runtime/config.toml$' \
  || fail "rpm -V does not see the edited config"
rpm --root "$R" -U --replacepkgs --nodeps --noscripts "$RPM" || fail "rpm reinstall"
grep -q '^log-level = "debug"' "$R/etc/gpu-container-runtime/config.toml" || fail "the .rpm reinstall replaced the edited config"
rpm --root "$R" -e --nodeps --noscripts gpu-container-runtime || fail "rpm -e"
[ -f "$R/etc/gpu-container-runtime/config.toml.rpmsave" ] || fail "rpm -e did not keep the edited config as .rpmsave"
[ -z "$(find "$R/usr" ! -type d)" ] || fail "rpm -e left files: $(find "$R/usr" ! -type d)"
pass "the .rpm installs, keeps an edited config, and erases (edited config saved as .rpmsave)"

# The .deb on this machine: a previous version (the same package relabelled ${VERSION}~prev)
# installed first, so the real package's install is a dpkg upgrade.
PREV_DEB="$WORK/gpu-container-runtime_${VERSION}~prev_amd64.deb"
dpkg-deb -R "$DEB" "$WORK/prev"
sed -i "s/^Version: .*/Version: ${VERSION}~prev/" "$WORK/prev/DEBIAN/control"
dpkg-deb -b "$WORK/prev" "$PREV_DEB" >/dev/null
rm -rf "$WORK/prev"
dpkg -P gpu-container-runtime >/dev/null 2>&1 || true  # what an aborted earlier run left
out=$(dpkg -i "$PREV_DEB") || fail "dpkg -i of the previous version"
printf '%s\n' "$out" | grep -q 'gpu-ctk runtime configure' || fail "no post-install hint on first install"
sed -i 's/^log-level = "info"/log-level = "debug"/' /etc/gpu-container-runtime/config.toml
out=$(dpkg -i "$DEB") || fail "dpkg upgrade from ${VERSION}~prev"
printf '%s\n' "$out" | grep -q 'gpu-ctk runtime configure' && fail "the post-install hint repeats on upgrade"
[ "$(dpkg-query -W -f '${Version}' gpu-container-runtime)" = "$VERSION" ] || fail "installed version"
grep -q '^log-level = "debug"' /etc/gpu-container-runtime/config.toml || fail "the upgrade replaced the edited config"
pass "upgrade from ${VERSION}~prev kept the edited config; the post-install hint shows on first install only"

/usr/bin/gpu-container-runtime --version | grep -q "gpu-container-runtime version $VERSION" || fail "--version"
/usr/bin/gpu-device-plugin --version | grep -q "gpu-device-plugin version $VERSION" || fail "gpu-device-plugin --version"
for unit in gpu-device-plugin.service gpu-cdi-refresh.service gpu-cdi-refresh.path; do
  [ ! -e /etc/systemd/system/multi-user.target.wants/$unit ] || fail "$unit was enabled by the package"
done
# The units as installed, against this machine's systemd units (PID 1 need not be systemd).
systemd-analyze verify --man=no /lib/systemd/system/gpu-device-plugin.service \
  /lib/systemd/system/gpu-cdi-refresh.service /lib/systemd/system/gpu-cdi-refresh.path \
  >"$WORK/verify.log" 2>&1 || fail "systemd-analyze verify: $(cat "$WORK/verify.log")"
for link in nvidia-container-runtime-hook nvidia-ctk nvidia-container-cli nvidia-cdi-hook; do
  [ "$(readlink /usr/bin/$link)" = gpu-ctk ] || fail "$link link"
done
for link in nvidia-container-runtime nvidia-container-runtime.cdi nvidia-container-runtime.legacy; do
  [ "$(readlink /usr/bin/$link)" = gpu-container-runtime ] || fail "$link link"
done
/usr/bin/nvidia-ctk --version | grep -q "gpu-ctk version $VERSION (as nvidia-ctk)" || fail "nvidia-ctk --version"
grep -qx /etc/gpu-container-runtime/config.toml /var/lib/dpkg/info/gpu-container-runtime.conffiles || fail "conffile"
pass "installed; --version $VERSION; links and conffile in place; units not enabled, verified"

"$B/test/gcr-fixture" busybox "$WORK/bundle" -- /bin/sh -c 'echo container through the installed shim'
out=$(env -u GPU_CONTAINER_RUNTIME_CONFIG /usr/bin/gpu-container-runtime --root "$WORK/runc" run --bundle "$WORK/bundle" gcr-pkg-$$)
[ "$out" = "container through the installed shim" ] || fail "container run: $out"
pass "a busybox container runs through /usr/bin/gpu-container-runtime and runc"

files=$(printf '%s\n' "$deb_files" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\.||')
dpkg -r gpu-container-runtime >/dev/null || fail "dpkg -r"
for f in $files; do
  [ "$f" = /etc/gpu-container-runtime/config.toml ] && continue
  [ -e "$f" ] || [ -L "$f" ] && fail "$f left after remove"
done
[ -f /etc/gpu-container-runtime/config.toml ] || fail "remove dropped the config"
pass "remove left only the config"

dpkg -P gpu-container-runtime >/dev/null || fail "dpkg -P"
[ ! -e /etc/gpu-container-runtime ] || fail "purge left /etc/gpu-container-runtime"
[ ! -e /usr/share/doc/gpu-container-runtime ] || fail "purge left the doc dir"
pass "purge removed everything"
