#!/bin/sh
# Builds driver roots from NVIDIA's real userspace driver in Debian 12's non-free archive, for
# the tests that run containers on real driver files (test/integration/real_driver_test.cpp).
#
# The .debs of one driver version (amd64, and i386 for compat32) are fetched with
# `apt-get download` through a private sources list naming non-free, with private lists, cache,
# preferences and package status (the machine's sources, preferences and installed packages
# are not used, and nothing of its apt state is changed), unpacked with `dpkg-deb -x` (never installed) and
# laid out twice (and a third layout made from the second, below), with the links the
# packages' maintainer scripts make on a real system:
#   debian/  Debian's own layout: libraries in <triplet>/nvidia/current, reached through
#            /etc/alternatives links (nvidia-alternative, glx-alternative-nvidia);
#   flat/    the layout of NVIDIA's .run installer: every library in the multiarch directory,
#            Xorg modules under /usr/lib/xorg/modules, VDPAU and GBM drivers in vdpau/ and gbm/.
# Each root gets Debian's loader configuration and its ld.so.cache (ldconfig -r).
#
# Everything is cached in $GCR_TEST_CACHE (default /var/cache/gpu-container-runtime-tests),
# outside the checkout; the output says whether the cache was used. Without a cache and
# without the archive, this fails. Prints the directory holding debian/, flat/ and nvidia/
# (below) last.
# Needs root (the files must be root's, as a real driver's are).
set -eu
# shellcheck source=test/private-apt.sh
. "$(dirname "$0")/private-apt.sh"

CACHE=${GCR_TEST_CACHE:-/var/cache/gpu-container-runtime-tests}/nvidia-driver
ARCHIVE=${GCR_DEBIAN_ARCHIVE:-http://deb.debian.org/debian}
# Bump when the layouts built below change: a cache built by another revision is rebuilt.
LAYOUT_REVISION=2

PACKAGES="libcuda1 libcudadebugger1 libnvidia-ml1 libnvidia-cfg1 libnvidia-api1
libnvidia-ptxjitcompiler1 libnvidia-nvvm4 libnvidia-allocator1 libnvidia-pkcs11-openssl3
nvidia-smi nvidia-cuda-mps nvidia-driver-bin nvidia-alternative nvidia-kernel-support
libgl1-nvidia-glvnd-glx libglx-nvidia0 libnvidia-glcore libegl-nvidia0 libnvidia-eglcore
libgles-nvidia1 libgles-nvidia2 nvidia-egl-common nvidia-egl-icd libnvidia-egl-wayland1
libnvidia-egl-gbm1 libnvidia-glvkspirv nvidia-vulkan-common nvidia-vulkan-icd
nvidia-opencl-common nvidia-opencl-icd nvidia-vdpau-driver libnvcuvid1 libnvidia-encode1
libnvidia-opticalflow1 libnvidia-fbc1 libnvoptix1 libnvidia-rtcore libnvidia-ngx1
xserver-xorg-video-nvidia firmware-nvidia-gsp
libcuda1:i386 libnvidia-ml1:i386 libglx-nvidia0:i386 libnvidia-glcore:i386 libegl-nvidia0:i386
libnvidia-eglcore:i386"

say() { echo "real-driver: $*" >&2; }
die() {
  say "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root: a driver's files are root's"
mkdir -p "$CACHE"
# One builder at a time (test binaries run in parallel may all find the cache cold).
exec 9>"$CACHE/.lock"
flock 9
KEY="revision $LAYOUT_REVISION; packages $(echo "$PACKAGES" | tr '\n' ' ')"

# nvidia/: a driver kept in /usr/local/nvidia, as on cloud GPU hosts (and the H100 and H200
# hosts the shim was measured on): flat/'s libraries in lib64/ and lib/, its programs in bin/
# with wrapper scripts in /usr/bin that run them, a loader configuration naming both
# directories; the rest where the .run installer puts it. A copy of flat/ (the runtime refuses
# a driver file with several names on a writable filesystem), made when missing or of another
# revision: nothing is downloaded for it.
NVIDIA_REVISION=1
nvidia_layout() {
  L=$1
  [ "$(cat "$L/nvidia.revision" 2>/dev/null)" = "$NVIDIA_REVISION" ] && [ -d "$L/nvidia" ] && return 0
  N=$L/nvidia.new
  rm -rf "$N" "$L/nvidia" "$L/nvidia.revision"
  cp -a "$L/flat" "$N"
  mkdir -p "$N/usr/local/nvidia/lib64" "$N/usr/local/nvidia/lib" "$N/usr/local/nvidia/bin"
  mv "$N"/usr/lib/x86_64-linux-gnu/lib* "$N/usr/local/nvidia/lib64/"
  mv "$N"/usr/lib/i386-linux-gnu/lib* "$N/usr/local/nvidia/lib/"
  for t in x86_64-linux-gnu:lib64 i386-linux-gnu:lib; do
    gbm=$N/usr/lib/${t%:*}/gbm/nvidia-drm_gbm.so
    if [ -L "$gbm" ]; then ln -sfn "/usr/local/nvidia/${t#*:}/$(basename "$(readlink "$gbm")")" "$gbm"; fi
  done
  for prog in "$N"/usr/bin/nvidia-*; do
    name=$(basename "$prog")
    mv "$prog" "$N/usr/local/nvidia/bin/"
    printf '#!/bin/sh\nexec /usr/local/nvidia/bin/%s "$@"\n' "$name" >"$prog"
    chmod 0755 "$prog"
  done
  printf '/usr/local/nvidia/lib64\n/usr/local/nvidia/lib\n' >"$N/etc/ld.so.conf.d/000_nvidia.conf"
  ldconfig -r "$N"
  mv "$N" "$L/nvidia"
  echo "$NVIDIA_REVISION" >"$L/nvidia.revision"
  say "made the nvidia layout (a driver in /usr/local/nvidia) from flat/ in $L"
}

if [ -f "$CACHE/ready" ] && [ "$(sed -n 2p "$CACHE/ready")" = "$KEY" ]; then
  say "cache used: driver $(sed -n 1p "$CACHE/ready") in $CACHE (nothing downloaded)"
  nvidia_layout "$CACHE/layouts"
  echo "$CACHE/layouts"
  exit 0
fi

say "cache not used ($CACHE has no layouts of this revision): downloading from $ARCHIVE"
rm -rf "$CACHE/apt" "$CACHE/debs" "$CACHE/layouts" "$CACHE/ready"
mkdir -p "$CACHE/debs"
private_apt "$CACHE/apt" "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $ARCHIVE bookworm main contrib non-free non-free-firmware" amd64 i386
# shellcheck disable=SC2086
apt-get $APT -q update >"$CACHE/apt/update.log" 2>&1 ||
  die "cannot reach Debian's archive ($ARCHIVE): $(tail -n 3 "$CACHE/apt/update.log" | tr '\n' ' ')"
# shellcheck disable=SC2086
VERSION=$(apt-cache $APT policy libcuda1 | sed -n 's/^ *Candidate: \(.*\)-[^-]*$/\1/p')
[ -n "$VERSION" ] && [ "$VERSION" != "(none)" ] || die "the archive lists no libcuda1 in non-free"
# shellcheck disable=SC2086
(cd "$CACHE/debs" && apt-get $APT -q download $PACKAGES >"$CACHE/apt/download.log" 2>&1) ||
  die "cannot download the driver packages: $(tail -n 3 "$CACHE/apt/download.log" | tr '\n' ' ')"
say "downloaded $(ls "$CACHE/debs" | wc -l) packages of driver $VERSION ($(du -sh "$CACHE/debs" | cut -f1))"

STAGE=$CACHE/layouts.new
rm -rf "$STAGE"
mkdir -p "$STAGE/debian" "$STAGE/flat"
D=$STAGE/debian
for deb in "$CACHE"/debs/*.deb; do dpkg-deb -x "$deb" "$D"; done
rm -rf "$D/usr/share/doc" "$D/usr/share/man" "$D/usr/share/bug" "$D/usr/share/lintian"
# Debian 12 merges /usr: what a package ships in /lib (the GSP firmware) is in /usr/lib.
for d in lib bin sbin; do
  if [ -d "$D/$d" ] && [ ! -L "$D/$d" ]; then
    mkdir -p "$D/usr/$d"
    cp -a "$D/$d/." "$D/usr/$d/"
    rm -rf "${D:?}/$d"
  fi
done

# Debian 12's merged /usr and loader configuration (libc6).
loader_config() {
  root=$1
  mkdir -p "$root/etc/ld.so.conf.d" "$root/usr/lib" "$root/usr/bin" "$root/usr/sbin"
  for d in lib bin sbin; do [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"; done
  echo "include /etc/ld.so.conf.d/*.conf" >"$root/etc/ld.so.conf"
  echo "/usr/local/lib" >"$root/etc/ld.so.conf.d/libc.conf"
  for t in x86_64-linux-gnu i386-linux-gnu; do
    printf '/usr/local/lib/%s\n/lib/%s\n/usr/lib/%s\n' "$t" "$t" "$t" \
      >"$root/etc/ld.so.conf.d/$t.conf"
  done
}

# update-alternatives' result: LINK -> /etc/alternatives/NAME -> SOURCE, made only where
# the maintainer script would (SOURCE exists, LINK's directory exists).
alternative() {
  link=$1 name=$2 source=$3
  [ -e "$D$source" ] || [ -L "$D$source" ] || return 0
  [ -d "$D$(dirname "$link")" ] || return 0
  mkdir -p "$D/etc/alternatives"
  ln -sfn "$source" "$D/etc/alternatives/$name"
  ln -sfn "/etc/alternatives/$name" "$D$link"
}

loader_config "$D"
# The directories other packages a desktop system has would provide (libvdpau1, libgbm1,
# xserver-xorg-core, libgl1-mesa-dri).
for t in x86_64-linux-gnu i386-linux-gnu; do mkdir -p "$D/usr/lib/$t/vdpau" "$D/usr/lib/$t/gbm"; done
mkdir -p "$D/usr/lib/xorg/modules/drivers" "$D/usr/lib/xorg/modules/extensions" \
  "$D/usr/share/X11/xorg.conf.d" "$D/etc/modprobe.d"
# nvidia-alternative's postinst (the "nvidia" alternative and its slaves).
alternative /usr/lib/nvidia/nvidia nvidia /usr/lib/nvidia/current
alternative /usr/lib/nvidia/libglxserver_nvidia.so nvidia--libglxserver_nvidia.so \
  /usr/lib/nvidia/current/libglxserver_nvidia.so
alternative /usr/lib/nvidia/nvidia_drv.so nvidia--nvidia_drv.so /usr/lib/nvidia/current/nvidia_drv.so
for t in x86_64-linux-gnu i386-linux-gnu; do
  for lib in libGLX_nvidia.so.0 libEGL_nvidia.so.0 libGLESv1_CM_nvidia.so.1 libGLESv2_nvidia.so.2 \
    libcuda.so.1 libcuda.so libcudadebugger.so.1 libnvcuvid.so.1 libnvcuvid.so \
    libnvidia-allocator.so.1 libnvidia-api.so.1 libnvidia-encode.so.1 libnvidia-fbc.so.1 \
    libnvidia-ml.so.1 libnvidia-ngx.so.1 libnvidia-nvvm.so.4 "libnvidia-nvvm.so.$VERSION" \
    libnvidia-opencl.so.1 libnvidia-opticalflow.so.1 libnvidia-ptxjitcompiler.so.1 \
    libnvoptix.so.1; do
    alternative "/usr/lib/$t/$lib" "nvidia--$lib-$t" "/usr/lib/$t/nvidia/current/$lib"
  done
  alternative "/usr/lib/$t/vdpau/libvdpau_nvidia.so.1" "nvidia--libvdpau_nvidia.so.1-$t" \
    "/usr/lib/$t/nvidia/current/libvdpau_nvidia.so.1"
  alternative "/usr/lib/$t/gbm/nvidia-drm_gbm.so" "nvidia--nvidia-drm_gbm.so-$t" \
    "/usr/lib/$t/nvidia/current/nvidia-drm_gbm.so"
  mkdir -p "$D/usr/lib/$t/nvidia"
  alternative "/usr/lib/$t/nvidia/libnvidia-cfg.so.1" "nvidia--libnvidia-cfg.so.1-$t" \
    "/usr/lib/$t/nvidia/current/libnvidia-cfg.so.1"
done
alternative /usr/share/nvidia/nvoptix.bin nvidia--nvoptix.bin \
  /usr/lib/x86_64-linux-gnu/nvidia/current/nvoptix.bin
alternative /usr/bin/nvidia-smi nvidia--nvidia-smi /usr/lib/nvidia/current/nvidia-smi
alternative /usr/bin/nvidia-debugdump nvidia--nvidia-debugdump /usr/lib/nvidia/current/nvidia-debugdump
alternative /etc/nvidia/nvidia-drm-outputclass.conf nvidia--nvidia-drm-outputclass.conf \
  /etc/nvidia/current/nvidia-drm-outputclass.conf
# glx-alternative-nvidia's postinst (the "glx" alternative, NVIDIA selected).
for t in x86_64-linux-gnu i386-linux-gnu; do
  alternative "/usr/lib/$t/libGLX_indirect.so.0" "glx--libGLX_indirect.so.0-$t" \
    "/usr/lib/$t/libGLX_nvidia.so.0"
  alternative "/usr/lib/$t/libnvidia-cfg.so.1" "glx--libnvidia-cfg.so.1-$t" \
    "/usr/lib/$t/nvidia/libnvidia-cfg.so.1"
done
alternative /usr/lib/xorg/modules/drivers/nvidia_drv.so glx--nvidia_drv.so /usr/lib/nvidia/nvidia_drv.so
alternative /usr/lib/xorg/modules/extensions/libglxserver_nvidia.so glx--libglxserver_nvidia.so \
  /usr/lib/nvidia/libglxserver_nvidia.so
alternative /usr/share/X11/xorg.conf.d/nvidia-drm-outputclass.conf glx--nvidia-drm-outputclass.conf \
  /etc/nvidia/nvidia-drm-outputclass.conf
ldconfig -r "$D"

# The .run installer's layout, from the same files.
F=$STAGE/flat
loader_config "$F"
mkdir -p "$F/usr/lib/xorg/modules/drivers" "$F/usr/lib/xorg/modules/extensions" \
  "$F/usr/share/X11/xorg.conf.d" "$F/usr/share/nvidia" "$F/lib/firmware/nvidia"
for t in x86_64-linux-gnu i386-linux-gnu; do
  mkdir -p "$F/usr/lib/$t/vdpau" "$F/usr/lib/$t/gbm"
  # Every library file (not a link) of the driver, from wherever Debian put it.
  find "$D/usr/lib/$t" -type f -name 'lib*.so*' | while read -r file; do
    name=$(basename "$file")
    case $name in
      libvdpau_nvidia.so.*) cp -p "$file" "$F/usr/lib/$t/vdpau/$name" ;;
      *) cp -p "$file" "$F/usr/lib/$t/$name" ;;
    esac
  done
  # The links nvidia-installer makes (ldconfig -r below makes the SONAME ones).
  if [ -e "$F/usr/lib/$t/vdpau/libvdpau_nvidia.so.$VERSION" ]; then
    ln -sfn "libvdpau_nvidia.so.$VERSION" "$F/usr/lib/$t/vdpau/libvdpau_nvidia.so.1"
  fi
  if [ -e "$F/usr/lib/$t/libnvidia-allocator.so.$VERSION" ]; then
    ln -sfn "../libnvidia-allocator.so.$VERSION" "$F/usr/lib/$t/gbm/nvidia-drm_gbm.so"
  fi
  if [ -e "$F/usr/lib/$t/libGLX_nvidia.so.$VERSION" ]; then
    ln -sfn "libGLX_nvidia.so.$VERSION" "$F/usr/lib/$t/libGLX_indirect.so.0"
  fi
  for dev in libcuda libnvcuvid libnvidia-encode libnvidia-fbc libnvidia-ml libnvidia-opticalflow; do
    if [ -e "$F/usr/lib/$t/$dev.so.$VERSION" ]; then ln -sfn "$dev.so.1" "$F/usr/lib/$t/$dev.so"; fi
  done
done
cp -p "$D/usr/lib/nvidia/current/nvidia_drv.so" "$F/usr/lib/xorg/modules/drivers/"
cp -p "$D/usr/lib/nvidia/current/libglxserver_nvidia.so.$VERSION" "$F/usr/lib/xorg/modules/extensions/"
ln -sfn "libglxserver_nvidia.so.$VERSION" "$F/usr/lib/xorg/modules/extensions/libglxserver_nvidia.so"
for prog in nvidia-smi nvidia-debugdump; do cp -p "$D/usr/lib/nvidia/current/$prog" "$F/usr/bin/"; done
cp -p "$D/usr/bin/nvidia-cuda-mps-control" "$F/usr/bin/"
cp -p "$D/usr/sbin/nvidia-cuda-mps-server" "$F/usr/bin/"
cp -p "$D/usr/lib/x86_64-linux-gnu/nvidia/current/nvoptix.bin" "$F/usr/share/nvidia/"
cp -p "$D/etc/nvidia/current/nvidia-drm-outputclass.conf" "$F/usr/share/X11/xorg.conf.d/"
cp -a "$D/lib/firmware/nvidia/$VERSION" "$F/lib/firmware/nvidia/"
for dir in usr/share/glvnd usr/share/egl usr/share/vulkan etc/OpenCL; do
  mkdir -p "$F/$(dirname "$dir")"
  cp -a "$D/$dir" "$F/$dir"
done
ldconfig -r "$F"

rm -rf "$CACHE/layouts"
mv "$STAGE" "$CACHE/layouts"
nvidia_layout "$CACHE/layouts"
printf '%s\n%s\n' "$VERSION" "$KEY" >"$CACHE/ready"
say "built the debian, flat and nvidia layouts of driver $VERSION in $CACHE/layouts ($(du -sh "$CACHE/layouts" | cut -f1))"
echo "$CACHE/layouts"
