// mig-strategy single's rules, as NVIDIA's device plugin has them: whole GPUs when no GPU is in
// MIG mode, MIG devices when every GPU is with one profile, else one line saying why; and the
// devices the plugin advertises under each strategy, a GPU in MIG mode with no MIG device yet
// included.
#include <doctest/doctest.h>

#include "deviceplugin/devices.h"
#include "mig/mig_strategy.h"

using gcr::MigDevice;
using gcr::SingleLayout;

namespace {

MigDevice sliced_mig(unsigned index, unsigned slices, unsigned long long memory_mb) {
  MigDevice m;
  m.index = index;
  m.uuid = "MIG-" + std::to_string(index) + "-" + std::to_string(slices);
  m.gpu_instance = index + 1;
  m.gpu_slices = slices;
  m.memory_mb = memory_mb;
  return m;
}

std::vector<gcr::Gpu> gpus_counted(unsigned count) {
  std::vector<gcr::Gpu> out;
  for (unsigned i = 0; i < count; ++i) {
    gcr::Gpu gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.minor = i;
    out.push_back(gpu);
  }
  return out;
}

using Migs = std::map<std::string, std::vector<MigDevice>>;

std::vector<std::string> ids_of(const gcr::Result<std::vector<gcr::PluginDevice>>& devices) {
  std::vector<std::string> out;
  for (const auto& d : *devices) out.push_back(d.resource + " " + d.id);
  return out;
}

gcr::Config strategy(const std::string& name) {
  gcr::Config c;
  c.device_plugin.mig_strategy = name;
  return c;
}

}  // namespace

TEST_CASE("single_layout: whole GPUs, MIG devices, or why neither") {
  const std::vector<MigDevice> two_small{sliced_mig(0, 1, 4864), sliced_mig(1, 1, 4864)};
  const std::vector<MigDevice> one_big{sliced_mig(0, 3, 20096)};
  const std::vector<MigDevice> none;
  const auto gpu = [](unsigned i, bool mode, const std::vector<MigDevice>* migs) {
    return gcr::MigGpu{i, "GPU-" + std::to_string(i), mode, migs};
  };

  CHECK(*gcr::single_layout({gpu(0, false, nullptr), gpu(1, false, nullptr)}) ==
        SingleLayout::kWholeGpus);
  CHECK(*gcr::single_layout({gpu(0, true, &two_small), gpu(1, true, &two_small)}) ==
        SingleLayout::kMigDevices);

  const auto mixture = gcr::single_layout({gpu(0, true, &two_small), gpu(1, false, nullptr)});
  REQUIRE_FALSE(mixture.ok());
  CHECK(mixture.error().message ==
        "GPU 1 (GPU-1) is not in MIG mode while GPU 0 (GPU-0) is; use mixed");

  const auto empty = gcr::single_layout({gpu(0, true, &two_small), gpu(1, true, &none)});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "GPU 1 (GPU-1) is in MIG mode with no MIG devices");

  const auto profiles = gcr::single_layout({gpu(0, true, &two_small), gpu(1, true, &one_big)});
  REQUIRE_FALSE(profiles.ok());
  CHECK(profiles.error().message ==
        "the GPUs have MIG devices of several profiles (1g.5gb, 3g.20gb); use mixed");
}

TEST_CASE("devices_of: single falls back to whole GPUs when no GPU is in MIG mode") {
  // NVIDIA's plugin does so, and a cluster-wide mig-strategy single (the GPU Operator's default)
  // reaches nodes without MIG: each must still advertise its GPUs.
  const auto whole = gcr::devices_of(gpus_counted(2), {}, strategy("single"));
  REQUIRE(whole.ok());
  CHECK(ids_of(whole) == std::vector<std::string>{"nvidia.com/gpu GPU-0", "nvidia.com/gpu GPU-1"});

  const Migs both{{"GPU-0", {sliced_mig(0, 1, 4864)}}, {"GPU-1", {sliced_mig(0, 1, 4864)}}};
  const auto migs = gcr::devices_of(gpus_counted(2), both, strategy("single"));
  REQUIRE(migs.ok());
  CHECK(ids_of(migs) ==
        std::vector<std::string>{"nvidia.com/gpu MIG-0-1", "nvidia.com/gpu MIG-0-1"});

  // GPU 1 in MIG mode with nothing made on it: single advertises nothing, and says why.
  const Migs one_empty{{"GPU-0", {sliced_mig(0, 1, 4864)}}, {"GPU-1", {}}};
  const auto invalid = gcr::devices_of(gpus_counted(2), one_empty, strategy("single"));
  REQUIRE_FALSE(invalid.ok());
  CHECK(invalid.error().message ==
        "mig-strategy single: GPU 1 (GPU-1) is in MIG mode with no MIG devices");
}

TEST_CASE("devices_of: mixed advertises nothing of a GPU in MIG mode with no MIG device") {
  // CUDA sees no device on such a GPU: advertised whole, a pod would get a GPU it cannot use.
  const Migs one_empty{{"GPU-0", {sliced_mig(0, 1, 4864)}}, {"GPU-1", {}}};
  const auto devices = gcr::devices_of(gpus_counted(3), one_empty, strategy("mixed"));
  REQUIRE(devices.ok());
  CHECK(ids_of(devices) ==
        std::vector<std::string>{"nvidia.com/mig-1g.5gb MIG-0-1", "nvidia.com/gpu GPU-2"});
  // With none, MIG is not looked at: every GPU whole.
  CHECK(ids_of(gcr::devices_of(gpus_counted(3), one_empty, strategy("none"))).size() == 3);
}

TEST_CASE("devices_of: mixed skips a MIG device whose compute instance is smaller; single not") {
  auto small_compute = sliced_mig(1, 3, 20096);
  small_compute.attributes.compute_slices = 1;
  auto whole = sliced_mig(0, 3, 20096);
  whole.attributes.compute_slices = 3;
  const Migs migs{{"GPU-0", {whole, small_compute}}};
  CHECK(ids_of(gcr::devices_of(gpus_counted(1), migs, strategy("mixed"))) ==
        std::vector<std::string>{"nvidia.com/mig-3g.20gb MIG-0-3"});
  // NVIDIA's single takes any one profile, 1c.3g.20gb too.
  const Migs uniform{{"GPU-0", {small_compute}}};
  CHECK(ids_of(gcr::devices_of(gpus_counted(1), uniform, strategy("single"))) ==
        std::vector<std::string>{"nvidia.com/gpu MIG-1-3"});
}

TEST_CASE("MIG profile names as NVIDIA computes them: memory in eighths of the GPU's") {
  constexpr unsigned long long kMiB = 1ULL << 20;
  const auto named = [](unsigned slices, unsigned long long memory_mb, unsigned long long gpu_mib,
                        unsigned compute_slices = 0) {
    MigDevice m = sliced_mig(0, slices, memory_mb);
    m.gpu_memory_bytes = gpu_mib * kMiB;
    m.attributes.compute_slices = compute_slices == 0 ? slices : compute_slices;
    return m.profile();
  };
  // A100-SXM4-40GB (NVML: 40960 MiB), its MIG devices' memory as NVML reports it.
  CHECK(named(1, 4864, 40960) == "1g.5gb");
  CHECK(named(2, 9984, 40960) == "2g.10gb");
  CHECK(named(3, 20096, 40960) == "3g.20gb");
  CHECK(named(7, 40448, 40960) == "7g.40gb");
  // A compute instance smaller than its GPU instance.
  CHECK(named(3, 20096, 40960, 1) == "1c.3g.20gb");
  // H100 80GB HBM3 (81559 MiB): 80 GiB rounded up, a 1g device of 9.75 GiB is an eighth.
  CHECK(named(1, 9984, 81559) == "1g.10gb");
  // H200 (143771 MiB, 141 GiB rounded up): a share up to an eighth is 1g.18gb, though its own
  // memory rounds up to 17 GiB; a quarter is 35, a half 71, the whole 141.
  CHECK(named(1, 16640, 143771) == "1g.18gb");
  CHECK(named(1, 33280, 143771) == "1g.35gb");
  CHECK(named(3, 69120, 143771) == "3g.71gb");
  CHECK(named(7, 141312, 143771) == "7g.141gb");
  // Without the GPU's memory: the device's own, in GiB rounded up.
  MigDevice unknown = sliced_mig(0, 1, 16640);
  CHECK(unknown.profile() == "1g.17gb");
  // A media-extension profile's suffix, as resource names write it.
  unknown.profile_suffix = ".me";
  CHECK(unknown.profile() == "1g.17gb.me");
}
