#!/bin/sh
# Builds the .deb and the .rpm and checks them. The .rpm is installed, reinstalled and erased in
# a throw-away root; the .deb on this machine: install a previous version, edit the config,
# upgrade (the edit stays), run a container through the installed shim with real runc, remove
# (only the config stays), purge (nothing stays). Needs root; run after a
# build (it uses build/test/gcr-fixture for the test container).
set -eu
cd "$(dirname "$0")/.."
B=$(pwd)/${BUILD_DIR:-build}
fail() { echo "test-packages: FAIL: $*" >&2; exit 1; }
pass() { echo "test-packages: ok: $*"; }

VERSION=$(scripts/version.sh)
# Built as a user with the source tarball would: from an unpacked `git archive`, no .git, with
# package.sh's own flags (the .deb Debian's, the .rpm RelWithDebInfo), so README's package.sh
# builds the same objects (the compiler cache gives them to it). A compiler warning in either
# build's log fails here, as -Werror would: the cache replays a warning with the object.
TARBALL_DIR=$(mktemp -d /tmp/gcr-tarball-XXXXXX)
git archive --prefix="gpu-container-runtime-$VERSION/" HEAD | tar -x -C "$TARBALL_DIR"
LOGS=$TARBALL_DIR/logs OUT=$(pwd)/build-packages \
  "$TARBALL_DIR/gpu-container-runtime-$VERSION/scripts/package.sh" >/dev/null
DEB=build-packages/gpu-container-runtime_${VERSION}_amd64.deb
RPM=build-packages/gpu-container-runtime-${VERSION}.x86_64.rpm
if [ ! -f "$DEB" ] || [ ! -f "$RPM" ]; then fail "packages not built"; fi
warned=0
scripts/compiler-warnings.sh "$TARBALL_DIR/logs/deb.log" "$TARBALL_DIR/logs/rpm.log" >&2 || warned=$?
rm -rf "$TARBALL_DIR"
case $warned in
  0) fail "the package builds warn (above)" ;;
  1) ;;
  *) fail "the package builds' logs cannot be read" ;;
esac
pass "built $DEB and $RPM from an unpacked source tarball (no git), no compiler warning"

lintian --fail-on error,warning "$DEB" 2>/dev/null || fail "lintian reports problems: lintian $DEB"
pass "lintian clean (remaining tags explained in deb/lintian-overrides)"

# The .rpm: same files, the config marked noreplace, the post-install message, the relations.
deb_files=$(dpkg-deb -c "$DEB")
rpm_files=$(rpm -qlp "$RPM")
for f in /usr/bin/gpu-container-runtime /usr/bin/gpu-ctk /usr/bin/nvidia-container-runtime \
         /usr/bin/nvidia-container-runtime-hook /usr/bin/nvidia-ctk /usr/bin/nvidia-container-cli \
         /usr/bin/gpu-device-plugin \
         /etc/gpu-container-runtime/config.toml; do
  printf '%s\n' "$rpm_files" | grep -qx "$f" || fail "$f missing from the .rpm"
  printf '%s\n' "$deb_files" | grep -q " \.$f" || fail "$f missing from the .deb"
done
printf '%s\n' "$rpm_files" | grep -qx /usr/lib/systemd/system/gpu-device-plugin.service \
  || fail "the device plugin's unit is missing from the .rpm"
printf '%s\n' "$deb_files" | grep -q ' \./lib/systemd/system/gpu-device-plugin.service' \
  || fail "the device plugin's unit is missing from the .deb"
rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$RPM" | grep -qx '/etc/gpu-container-runtime/config.toml cn' \
  || fail "the .rpm's config.toml is not %config(noreplace)"
rpm -qp --scripts "$RPM" | grep -q 'gpu-ctk runtime configure' || fail "the .rpm has no post-install hint"
rpm -qp --requires "$RPM" | grep -q '(runc or crun)' || fail "the .rpm does not require runc or crun"
rpm -qp --conflicts "$RPM" | grep -q nvidia-container-toolkit || fail "the .rpm does not conflict with nvidia-container-toolkit"
rpm -qip "$RPM" | grep -q "^Version *: $VERSION" || fail "the .rpm's version is not $VERSION"
pass "the .rpm holds the same files, noreplace config, scripts and relations"

WORK=$(mktemp -d /tmp/gcr-pkgtest-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# The .rpm in a throw-away root: files in place, an edited config kept across a reinstall
# (noreplace) and saved as .rpmsave on erase. Scriptlets need a shell inside the root: skipped.
R="$WORK/rpmroot"
rpm --root "$R" --initdb
rpm --root "$R" -i --nodeps --noscripts "$RPM" || fail "rpm -i into a throw-away root"
for f in /usr/bin/gpu-container-runtime /usr/bin/gpu-ctk; do
  [ -f "$R$f" ] || fail "$f not installed by the .rpm"
done
ls "$R"/usr/share/man/man1/gpu-ctk.1* >/dev/null 2>&1 || fail "gpu-ctk(1) not installed by the .rpm"
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
[ ! -e /etc/systemd/system/multi-user.target.wants/gpu-device-plugin.service ] \
  || fail "the device plugin's unit was enabled by the package"
for link in nvidia-container-runtime-hook nvidia-ctk nvidia-container-cli; do
  [ "$(readlink /usr/bin/$link)" = gpu-ctk ] || fail "$link link"
done
/usr/bin/nvidia-ctk --version | grep -q "gpu-ctk version $VERSION (as nvidia-ctk)" || fail "nvidia-ctk --version"
grep -qx /etc/gpu-container-runtime/config.toml /var/lib/dpkg/info/gpu-container-runtime.conffiles || fail "conffile"
pass "installed; --version $VERSION; links and conffile in place"

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
