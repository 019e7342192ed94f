#!/bin/sh
# Builds gpu-container-runtime_<version>_amd64.deb and gpu-container-runtime-<version>.x86_64.rpm
# into $OUT (default: build-packages/). In a git checkout they are built from the committed tree
# (git archive of HEAD, so the packages hold exactly what is checked in); in an unpacked source
# tarball, from the files there. The version comes from CMakeLists.txt. The product is compiled
# once: dpkg-buildpackage builds the .deb (Debian's build flags, DEB_CXXFLAGS_APPEND and the like
# change them), and the .rpm packages the tree that build compiled (the spec sets the .rpm's
# install paths again and runs `cmake --install`; nothing is compiled). RPM_CMAKE_ARGS instead
# gives the .rpm a build of its own, RelWithDebInfo plus those CMake options. LOGS names a
# directory that keeps the two logs (deb.log, rpm.log).
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-$(pwd)/build-packages}
VERSION=$(scripts/version.sh)
WORK=$(mktemp -d /tmp/gcr-package-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' HUP INT TERM
rm -rf "$OUT" && mkdir -p "$OUT"

SRC="$WORK/gpu-container-runtime-$VERSION"
mkdir -p "$SRC"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd)" ]; then
  git archive HEAD | tar -x -C "$SRC"
else
  tar -c --exclude=./build --exclude='./build-*' . | tar -x -C "$SRC"
fi

# debhelper builds the .deb with a HOME of its own, where no ccache.conf is: the compiler cache
# in effect here, how it hashes paths, its size limit, the options it leaves out of the hash and
# its sloppiness go to both builds in the environment instead (with CCACHE_DIR set, ccache reads no other
# ccache.conf than the cache's own). So does the file it logs its answers to, if it has one.
if command -v ccache >/dev/null; then
  CCACHE_DIR=$(ccache -k cache_dir) CCACHE_BASEDIR=$(ccache -k base_dir)
  CCACHE_MAXSIZE=$(ccache -k max_size) CCACHE_IGNOREOPTIONS=$(ccache -k ignore_options)
  CCACHE_SLOPPINESS=$(ccache -k sloppiness)
  NOHASHDIR=$(ccache -k hash_dir) STATSLOG=$(ccache -k stats_log)
  # Read before CCACHE_DIR is exported: from then on ccache reads no other ccache.conf.
  export CCACHE_DIR CCACHE_BASEDIR CCACHE_MAXSIZE CCACHE_IGNOREOPTIONS CCACHE_SLOPPINESS
  if [ "$NOHASHDIR" = false ]; then export CCACHE_NOHASHDIR=1; fi
  if [ -n "$STATSLOG" ]; then export CCACHE_STATSLOG="$STATSLOG"; fi
fi

# .deb: debian/ is made from deb/ plus a changelog entry for this version.
cp -r "$SRC/deb" "$SRC/debian"
cat >"$SRC/debian/changelog" <<CHANGELOG
gpu-container-runtime ($VERSION) unstable; urgency=medium

  * Release $VERSION.

 -- gpu-container-runtime developers <dev@gpu-container-runtime.invalid>  $(date -R)
CHANGELOG
(cd "$SRC" && dpkg-buildpackage -us -uc -b >"$WORK/deb.log" 2>&1) || { cat "$WORK/deb.log" >&2; exit 1; }
mv "$WORK"/gpu-container-runtime_"$VERSION"_amd64.deb "$OUT/"

# .rpm: rpmbuild from Debian's rpm package; build dependencies are Debian's, so --nodeps. It
# packages the .deb's build tree (debhelper's obj-<GNU type>: gcr_build_dir), or, with
# RPM_CMAKE_ARGS, builds its own. rpmbuild refuses a macro defined empty: gcr_cmake_args is
# defined only when there is something to add.
set -- --define "_topdir $WORK/rpm" --define "gcr_version $VERSION" --define "gcr_source $SRC"
if [ -n "${RPM_CMAKE_ARGS:-}" ]; then
  set -- "$@" --define "gcr_cmake_args $RPM_CMAKE_ARGS"
else
  TREE=$SRC/obj-$(dpkg-architecture -qDEB_HOST_GNU_TYPE)
  [ -f "$TREE/CMakeCache.txt" ] || { echo "package.sh: no .deb build tree in $TREE" >&2; exit 1; }
  set -- "$@" --define "gcr_build_dir $TREE"
fi
rpmbuild -bb --nodeps "$@" "$SRC/rpm/gpu-container-runtime.spec" >"$WORK/rpm.log" 2>&1 || { cat "$WORK/rpm.log" >&2; exit 1; }
mv "$WORK"/rpm/RPMS/x86_64/gpu-container-runtime-"$VERSION"-1.x86_64.rpm "$OUT/gpu-container-runtime-$VERSION.x86_64.rpm"
if [ -n "${LOGS:-}" ]; then
  mkdir -p "$LOGS" && cp "$WORK/deb.log" "$WORK/rpm.log" "$LOGS/"
fi
ls "$OUT"
