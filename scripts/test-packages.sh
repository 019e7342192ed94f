#!/bin/sh
# Builds the .deb and the .rpm, checks them, and exercises the .deb on this machine: install,
# run a container through the installed shim with real runc, keep an edited config across a
# reinstall, remove (only the config stays), purge (nothing stays). Needs root; run after a
# build (it uses build/test/gcr-fixture for the test container).
set -eu
cd "$(dirname "$0")/.."
B=$(pwd)/${BUILD_DIR:-build}
fail() { echo "test-packages: FAIL: $*" >&2; exit 1; }
pass() { echo "test-packages: ok: $*"; }

VERSION=$(sed -n 's/^project(gpu-container-runtime VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
scripts/package.sh >/dev/null
DEB=build-packages/gpu-container-runtime_${VERSION}_amd64.deb
RPM=build-packages/gpu-container-runtime-${VERSION}.x86_64.rpm
[ -f "$DEB" ] && [ -f "$RPM" ] || fail "packages not built"
pass "built $DEB and $RPM"

lintian --fail-on error,warning "$DEB" 2>/dev/null || fail "lintian reports problems: lintian $DEB"
pass "lintian clean (remaining tags explained in deb/lintian-overrides)"

# The .rpm: same files, the config marked noreplace, the post-install message, the relations.
deb_files=$(dpkg-deb -c "$DEB")
rpm_files=$(rpm -qlp "$RPM")
for f in /usr/bin/gpu-container-runtime /usr/bin/gpu-ctk /usr/bin/nvidia-container-runtime \
         /usr/bin/nvidia-container-runtime-hook /etc/gpu-container-runtime/config.toml; do
  printf '%s\n' "$rpm_files" | grep -qx "$f" || fail "$f missing from the .rpm"
  printf '%s\n' "$deb_files" | grep -q " \.$f" || fail "$f missing from the .deb"
done
rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$RPM" | grep -qx '/etc/gpu-container-runtime/config.toml cn' \
  || fail "the .rpm's config.toml is not %config(noreplace)"
rpm -qp --scripts "$RPM" | grep -q 'gpu-ctk runtime configure' || fail "the .rpm has no post-install hint"
rpm -qp --requires "$RPM" | grep -q '(runc or crun)' || fail "the .rpm does not require runc or crun"
rpm -qp --conflicts "$RPM" | grep -q nvidia-container-toolkit || fail "the .rpm does not conflict with nvidia-container-toolkit"
rpm -qip "$RPM" | grep -q "^Version *: $VERSION" || fail "the .rpm's version is not $VERSION"
pass "the .rpm holds the same files, noreplace config, scripts and relations"

# The .deb on this machine.
dpkg -i "$DEB" >/dev/null || fail "dpkg -i"
[ "$(dpkg-query -W -f '${Version}' gpu-container-runtime)" = "$VERSION" ] || fail "installed version"
/usr/bin/gpu-container-runtime --version | grep -q "gpu-container-runtime version $VERSION" || fail "--version"
[ "$(readlink /usr/bin/nvidia-container-runtime-hook)" = gpu-ctk ] || fail "nvidia-container-runtime-hook link"
grep -qx /etc/gpu-container-runtime/config.toml /var/lib/dpkg/info/gpu-container-runtime.conffiles || fail "conffile"
pass "installed; --version $VERSION; links and conffile in place"

WORK=$(mktemp -d /tmp/gcr-pkgtest-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$B/test/gcr-fixture" busybox "$WORK/bundle" -- /bin/sh -c 'echo container through the installed shim'
out=$(env -u GPU_CONTAINER_RUNTIME_CONFIG /usr/bin/gpu-container-runtime --root "$WORK/runc" run --bundle "$WORK/bundle" gcr-pkg-$$)
[ "$out" = "container through the installed shim" ] || fail "container run: $out"
pass "a busybox container runs through /usr/bin/gpu-container-runtime and runc"

sed -i 's/^log-level = "info"/log-level = "debug"/' /etc/gpu-container-runtime/config.toml
dpkg -i "$DEB" >/dev/null || fail "reinstall"
grep -q '^log-level = "debug"' /etc/gpu-container-runtime/config.toml || fail "the edited config was not kept"
pass "reinstall kept the edited config"

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
