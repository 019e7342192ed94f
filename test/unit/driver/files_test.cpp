#include <doctest/doctest.h>

#include <algorithm>

#include "driver/files.h"
#include "test_support.h"

using gcr::Capability;
using gcr::CapabilitySet;

namespace {

using gcr::test::contains;

CapabilitySet caps_of(std::initializer_list<Capability> list) {
  CapabilitySet set;
  for (Capability c : list) set.add(c);
  return set;
}

}  // namespace

TEST_CASE("modules belong to the capability of the loader that opens them, by directory") {
  using C = Capability;
  CHECK(gcr::capabilities_bringing("/usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1") ==
        caps_of({C::kVideo}));
  CHECK(gcr::capabilities_bringing("/usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so") ==
        caps_of({C::kGraphics, C::kDisplay}));
  CHECK(gcr::capabilities_bringing("/usr/lib/xorg/modules/drivers/nvidia_drv.so") ==
        caps_of({C::kDisplay}));
  CHECK(gcr::capabilities_bringing(
            "/usr/lib/xorg/modules/extensions/libglxserver_nvidia.so.535.261.03") ==
        caps_of({C::kDisplay}));
  // Another vendor's module in the same directory is none of the driver's.
  CHECK(gcr::capabilities_bringing("/usr/lib/xorg/modules/drivers/modesetting_drv.so") ==
        std::nullopt);
}

TEST_CASE("the OpenCL ICD comes with compute, whose library it names, not with graphics") {
  using C = Capability;
  CHECK(gcr::capabilities_bringing("/etc/OpenCL/vendors/nvidia.icd") ==
        caps_of({C::kCompute, C::kVideo}));
  CHECK(gcr::capabilities_bringing("/usr/share/egl/egl_external_platform.d/15_nvidia_gbm.json") ==
        caps_of({C::kGraphics, C::kDisplay}));
  // The libraries those files name go (and are withheld) with them.
  CHECK(gcr::capabilities_bringing("/usr/lib/x86_64-linux-gnu/libnvidia-egl-wayland.so.1.1.10") ==
        caps_of({C::kGraphics, C::kDisplay}));
  CHECK(gcr::capabilities_bringing("/usr/lib/x86_64-linux-gnu/libnvidia-eglcore.so.535.261.03") ==
        caps_of({C::kGraphics, C::kDisplay}));
}

TEST_CASE("GBM's allocator serves graphics as well as compute; the Vulkan producer graphics") {
  using C = Capability;
  const auto graphics = gcr::library_prefixes(caps_of({C::kGraphics}));
  CHECK(contains(graphics, "libnvidia-allocator.so"));
  CHECK(contains(graphics, "libnvidia-vulkan-producer.so"));
  CHECK_FALSE(contains(graphics, "libcuda.so"));
  const auto compute = gcr::library_prefixes(caps_of({C::kCompute}));
  CHECK(contains(compute, "libnvidia-allocator.so"));
  CHECK_FALSE(contains(compute, "libnvidia-vulkan-producer.so"));
  // libvdpau opens its driver by path: a module, not a library found by SONAME.
  CHECK_FALSE(contains(gcr::library_prefixes(caps_of({C::kVideo})), "libvdpau_nvidia.so"));
}

TEST_CASE("libGLX_indirect.so.0 is linked where the loader finds libGLX_nvidia.so.0") {
  const auto& links = gcr::library_links();
  const auto indirect = std::find_if(
      links.begin(), links.end(), [](const auto& l) { return l.link == "libGLX_indirect.so.0"; });
  REQUIRE(indirect != links.end());
  CHECK(indirect->loader_dir);
  CHECK(std::none_of(links.begin(), links.end(), [](const auto& l) {
    return l.link != "libGLX_indirect.so.0" && l.loader_dir;
  }));
}

TEST_CASE(
    "NVIDIA 1.18's additions: libnvidia-nvvm70 with compute, the IMEX programs with utility") {
  using C = Capability;
  CHECK(contains(gcr::library_prefixes(caps_of({C::kCompute})), "libnvidia-nvvm70.so"));
  CHECK_FALSE(contains(gcr::library_prefixes(caps_of({C::kUtility})), "libnvidia-nvvm70.so"));
  const auto utility = gcr::binary_names(caps_of({C::kUtility}));
  CHECK(contains(utility, "nvidia-imex"));
  CHECK(contains(utility, "nvidia-imex-ctl"));
  CHECK_FALSE(contains(gcr::binary_names(caps_of({C::kCompute})), "nvidia-imex"));
}
