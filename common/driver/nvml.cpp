#include "driver/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/text.h"

namespace gcr {
namespace {

constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;
constexpr int kTimeout = 10;
constexpr unsigned kMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned long long kXidCritical = 0x8;
constexpr int kRemoteSwitch = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr unsigned kNoInstance = 0xffffffffu;
constexpr unsigned kMigEnabled = 1;  // NVML_DEVICE_MIG_ENABLE

// NVML's structures, as its header lays them out.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct DeviceAttributes {
  unsigned multiprocessor_count, shared_copy_engines, shared_decoders, shared_encoders;
  unsigned shared_jpegs, shared_ofas, gpu_instance_slices, compute_instance_slices;
  unsigned long long memory_mb;
};
struct MemoryInfo {
  unsigned long long total, free, used;
};
struct GpuInstanceProfileInfo {
  unsigned id, is_p2p_supported, slices, instances, multiprocessors, copy_engines, decoders;
  unsigned encoders, jpegs, ofas;
  unsigned long long memory_mb;
};
struct GpuInstanceInfo {
  void* device;
  unsigned id, profile_id, placement_start, placement_size;
};
struct GpuFabricInfo {  // nvmlGpuFabricInfo_t
  unsigned char cluster_uuid[16];
  int status;
  unsigned clique_id;
  unsigned char state;
};
constexpr unsigned char kFabricNotSupported = 0;  // NVML_GPU_FABRIC_STATE_*
constexpr unsigned char kFabricCompleted = 3;

// A cluster UUID as text, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string uuid_text(const unsigned char (&bytes)[16]) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += hex[bytes[i] >> 4];
    out += hex[bytes[i] & 0xf];
  }
  return out;
}

// NVML's GPU instance profiles (NVML_GPU_INSTANCE_PROFILE_*) past the plain ones, and the
// suffix go-nvlib gives their names, '+' written '.' as in resource names.
constexpr unsigned kGpuInstanceProfiles = 17;  // NVML_GPU_INSTANCE_PROFILE_COUNT (R570)
std::string_view profile_suffix(unsigned profile) {
  switch (profile) {
    case 0x7:  // 1_SLICE_REV1
    case 0x8:  // 2_SLICE_REV1
      return ".me";
    case 0xA:  // 1_SLICE_GFX
    case 0xB:  // 2_SLICE_GFX
    case 0xC:  // 4_SLICE_GFX
      return ".gfx";
    case 0xD:  // 1_SLICE_NO_ME
    case 0xE:  // 2_SLICE_NO_ME
      return "-me";
    case 0xF:   // 1_SLICE_ALL_ME
    case 0x10:  // 2_SLICE_ALL_ME
      return ".me.all";
    default:
      return "";
  }
}
struct EventData {
  void* device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned gpu_instance;
  unsigned compute_instance;
};

std::string brand_name(int brand) {
  static const char* names[] = {"Unknown",    "Quadro",      "Tesla",     "NVS",       "GRID",
                                "GeForce",    "TITAN",       "VApps",     "VPC",       "VCS",
                                "VWS",        "CloudGaming", "QuadroRTX", "NvidiaRTX", "Nvidia",
                                "GeForceRTX", "TitanRTX"};
  return brand >= 0 && brand < static_cast<int>(sizeof names / sizeof names[0]) ? names[brand]
                                                                                : "Unknown";
}

}  // namespace

struct Nvml::Api {
  void* library = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_bus)(const char*, void**) = nullptr;
  int (*capability)(void*, int*, int*) = nullptr;
  int (*brand)(void*, int*) = nullptr;
  int (*memory)(void*, MemoryInfo*) = nullptr;
  int (*compute_mode)(void*, int*) = nullptr;
  int (*mig_mode)(void*, unsigned*, unsigned*) = nullptr;
  int (*cuda_version)(int*) = nullptr;
  int (*uuid)(void*, char*, unsigned) = nullptr;
  int (*max_migs)(void*, unsigned*) = nullptr;
  int (*mig_by_index)(void*, unsigned, void**) = nullptr;
  int (*gpu_instance)(void*, unsigned*) = nullptr;
  int (*compute_instance)(void*, unsigned*) = nullptr;
  int (*attributes)(void*, DeviceAttributes*) = nullptr;
  int (*instance_profile)(void*, unsigned, GpuInstanceProfileInfo*) = nullptr;
  int (*instance_by_id)(void*, unsigned, void**) = nullptr;
  int (*instance_info)(void*, GpuInstanceInfo*) = nullptr;
  int (*fabric_info)(void*, GpuFabricInfo*) = nullptr;
  int (*link_state)(void*, unsigned, int*) = nullptr;
  int (*link_remote)(void*, unsigned, PciInfo*) = nullptr;
  int (*link_remote_type)(void*, unsigned, int*) = nullptr;
  int (*ancestor)(void*, void*, int*) = nullptr;
  int (*event_set_create)(void**) = nullptr;
  int (*register_events)(void*, unsigned long long, void*) = nullptr;
  int (*event_wait)(void*, EventData*, unsigned) = nullptr;
  void* events = nullptr;
  std::vector<std::pair<void*, PciAddress>> watched;

  template <class Fn>
  void bind(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(::dlsym(library, name));
  }
};

std::string nvml_bus_id(const PciAddress& bus) {
  char id[32];
  std::snprintf(id, sizeof id, "%08x:%02x:%02x.%x", bus.domain, bus.bus, bus.device, bus.function);
  return id;
}

bool nvml_kernel_driver_failure(int status) {
  constexpr int kDriverNotLoaded = 9;
  constexpr int kLibRmVersionMismatch = 18;
  return status == kDriverNotLoaded || status == kLibRmVersionMismatch;
}

Result<std::unique_ptr<Nvml>> Nvml::open(const std::string& library_path, int* init_status) {
  auto api = std::make_unique<Api>();
  api->library = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) {
    const char* why = ::dlerror();
    return Error{"cannot load NVML: " + std::string(why != nullptr ? why : "dlopen failed")};
  }
  int (*init)() = nullptr;
  api->bind(init, "nvmlInit_v2");
  api->bind(api->shutdown, "nvmlShutdown");
  api->bind(api->by_bus, "nvmlDeviceGetHandleByPciBusId_v2");
  if (init == nullptr || api->shutdown == nullptr || api->by_bus == nullptr) {
    ::dlclose(api->library);
    return Error{"NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2 (" + library_path +
                 ")"};
  }
  if (const int status = init(); status != kSuccess) {
    const char* (*error_string)(int) = nullptr;
    api->bind(error_string, "nvmlErrorString");
    const char* words = error_string != nullptr ? error_string(status) : nullptr;
    const std::string why = (words != nullptr ? std::string(words) : std::string("error")) +
                            ", NVML status " + std::to_string(status);
    ::dlclose(api->library);
    if (init_status != nullptr) *init_status = status;
    return Error{"nvmlInit failed: " + why + " (" + library_path + ")"};
  }
  api->bind(api->capability, "nvmlDeviceGetCudaComputeCapability");
  api->bind(api->brand, "nvmlDeviceGetBrand");
  api->bind(api->memory, "nvmlDeviceGetMemoryInfo");
  api->bind(api->compute_mode, "nvmlDeviceGetComputeMode");
  api->bind(api->mig_mode, "nvmlDeviceGetMigMode");
  api->bind(api->cuda_version, "nvmlSystemGetCudaDriverVersion_v2");
  api->bind(api->uuid, "nvmlDeviceGetUUID");
  api->bind(api->max_migs, "nvmlDeviceGetMaxMigDeviceCount");
  api->bind(api->mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex");
  api->bind(api->gpu_instance, "nvmlDeviceGetGpuInstanceId");
  api->bind(api->compute_instance, "nvmlDeviceGetComputeInstanceId");
  api->bind(api->attributes, "nvmlDeviceGetAttributes_v2");
  api->bind(api->instance_profile, "nvmlDeviceGetGpuInstanceProfileInfo");
  api->bind(api->instance_by_id, "nvmlDeviceGetGpuInstanceById");
  api->bind(api->instance_info, "nvmlGpuInstanceGetInfo");
  api->bind(api->fabric_info, "nvmlDeviceGetGpuFabricInfo");
  api->bind(api->link_state, "nvmlDeviceGetNvLinkState");
  api->bind(api->link_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  api->bind(api->link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  api->bind(api->ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  api->bind(api->event_set_create, "nvmlEventSetCreate");
  api->bind(api->register_events, "nvmlDeviceRegisterEvents");
  api->bind(api->event_wait, "nvmlEventSetWait_v2");
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  ::dlclose(api_->library);
}

void* Nvml::handle(const PciAddress& gpu) {
  void* device = nullptr;
  return api_->by_bus(nvml_bus_id(gpu).c_str(), &device) == kSuccess ? device : nullptr;
}

std::optional<std::string> Nvml::arch(const PciAddress& gpu) {
  void* device = handle(gpu);
  int major = 0, minor = 0;
  if (device == nullptr || api_->capability == nullptr ||
      api_->capability(device, &major, &minor) != kSuccess)
    return std::nullopt;
  return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<std::string> Nvml::brand(const PciAddress& gpu) {
  void* device = handle(gpu);
  int b = 0;
  if (device == nullptr || api_->brand == nullptr || api_->brand(device, &b) != kSuccess)
    return std::nullopt;
  return brand_name(b);
}

std::optional<unsigned long long> Nvml::memory_mib(const PciAddress& gpu) {
  void* device = handle(gpu);
  MemoryInfo info{};
  if (device == nullptr || api_->memory == nullptr || api_->memory(device, &info) != kSuccess)
    return std::nullopt;
  return info.total / (1024 * 1024);
}

std::optional<unsigned> Nvml::compute_mode(const PciAddress& gpu) {
  void* device = handle(gpu);
  int mode = 0;
  if (device == nullptr || api_->compute_mode == nullptr ||
      api_->compute_mode(device, &mode) != kSuccess || mode < 0)
    return std::nullopt;
  return static_cast<unsigned>(mode);
}

std::optional<bool> Nvml::mig_capable(const PciAddress& gpu) {
  void* device = handle(gpu);
  if (device == nullptr || api_->mig_mode == nullptr) return std::nullopt;
  unsigned current = 0, pending = 0;
  const int rc = api_->mig_mode(device, &current, &pending);
  if (rc == kNotSupported) return false;
  if (rc != kSuccess) return std::nullopt;
  return true;
}

std::optional<bool> Nvml::mig_mode(const PciAddress& gpu) {
  if (api_->mig_mode == nullptr) return false;  // a driver older than MIG
  void* device = handle(gpu);
  if (device == nullptr) return std::nullopt;
  unsigned current = 0, pending = 0;
  const int rc = api_->mig_mode(device, &current, &pending);
  if (rc == kNotSupported) return false;
  if (rc != kSuccess) return std::nullopt;
  return current == kMigEnabled;
}

std::optional<GpuFabric> Nvml::fabric(const PciAddress& gpu) {
  if (api_->fabric_info == nullptr) return GpuFabric{};  // a driver older than the fabric
  void* device = handle(gpu);
  if (device == nullptr) return std::nullopt;
  GpuFabricInfo info{};
  const int rc = api_->fabric_info(device, &info);
  if (rc == kNotSupported) return GpuFabric{};
  if (rc != kSuccess) return std::nullopt;
  if (info.state == kFabricNotSupported) return GpuFabric{};
  if (info.state != kFabricCompleted) return GpuFabric{GpuFabric::State::kRegistering, {}, 0};
  static constexpr unsigned char kNone[16] = {};
  if (info.status != kSuccess || std::equal(std::begin(kNone), std::end(kNone), info.cluster_uuid))
    return GpuFabric{};
  return GpuFabric{GpuFabric::State::kAttached, uuid_text(info.cluster_uuid), info.clique_id};
}

std::optional<std::string> Nvml::cuda_version() {
  int version = 0;
  if (api_->cuda_version == nullptr || api_->cuda_version(&version) != kSuccess || version <= 0)
    return std::nullopt;
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::map<unsigned, unsigned> Nvml::instance_profiles(void* device) {
  std::map<unsigned, unsigned> out;
  if (api_->instance_profile == nullptr) return out;
  for (unsigned profile = 0; profile < kGpuInstanceProfiles; ++profile) {
    GpuInstanceProfileInfo info{};
    if (api_->instance_profile(device, profile, &info) == kSuccess) out[info.id] = profile;
  }
  return out;
}

std::string Nvml::profile_suffix_of(void* device, unsigned gpu_instance,
                                    const std::map<unsigned, unsigned>& profiles) {
  void* instance = nullptr;
  GpuInstanceInfo info{};
  if (api_->instance_by_id == nullptr || api_->instance_info == nullptr ||
      api_->instance_by_id(device, gpu_instance, &instance) != kSuccess ||
      api_->instance_info(instance, &info) != kSuccess)
    return "";
  const auto it = profiles.find(info.profile_id);
  return it == profiles.end() ? "" : std::string(profile_suffix(it->second));
}

std::vector<MigDevice> Nvml::mig_devices(const PciAddress& gpu) {
  std::vector<MigDevice> out;
  void* device = handle(gpu);
  unsigned max = 0;
  if (device == nullptr || !api_->max_migs || !api_->mig_by_index || !api_->uuid ||
      !api_->gpu_instance || !api_->compute_instance || api_->max_migs(device, &max) != kSuccess)
    return out;
  MemoryInfo gpu_memory{};  // the profile names need the GPU's memory and its instance profiles
  if (api_->memory == nullptr || api_->memory(device, &gpu_memory) != kSuccess)
    gpu_memory.total = 0;
  const auto profiles = instance_profiles(device);
  for (unsigned i = 0; i < max && i < 64; ++i) {
    void* mig = nullptr;
    if (api_->mig_by_index(device, i, &mig) != kSuccess) continue;
    char uuid[96] = {};
    MigDevice m;
    m.index = i;
    m.gpu_memory_bytes = gpu_memory.total;
    if (api_->uuid(mig, uuid, sizeof uuid) != kSuccess ||
        api_->gpu_instance(mig, &m.gpu_instance) != kSuccess ||
        api_->compute_instance(mig, &m.compute_instance) != kSuccess)
      continue;
    m.uuid = uuid;
    m.profile_suffix = profile_suffix_of(device, m.gpu_instance, profiles);
    DeviceAttributes attributes{};
    if (api_->attributes != nullptr && api_->attributes(mig, &attributes) == kSuccess) {
      m.gpu_slices = attributes.gpu_instance_slices;
      m.memory_mb = attributes.memory_mb;
      m.attributes = {attributes.multiprocessor_count, attributes.compute_instance_slices,
                      attributes.shared_copy_engines,  attributes.shared_decoders,
                      attributes.shared_encoders,      attributes.shared_jpegs,
                      attributes.shared_ofas};
    }
    out.push_back(m);
  }
  return out;
}

Result<std::vector<NvLink>> Nvml::nvlinks(const PciAddress& gpu) {
  void* device = handle(gpu);
  if (device == nullptr) return Error{"NVML has no handle for " + gpu.to_string()};
  if (!api_->link_state || !api_->link_remote) return Error{"NVML has no NVLink queries"};
  std::vector<NvLink> out;
  for (unsigned link = 0; link < kMaxLinks; ++link) {
    int active = 0;
    if (api_->link_state(device, link, &active) != kSuccess || active == 0) continue;
    NvLink end;
    int type = 0;
    end.to_switch = api_->link_remote_type != nullptr &&
                    api_->link_remote_type(device, link, &type) == kSuccess &&
                    type == kRemoteSwitch;
    PciInfo pci{};
    if (!end.to_switch && api_->link_remote(device, link, &pci) == kSuccess) {
      const auto remote = parse_pci_address(pci.bus_id);
      if (!remote) continue;
      end.remote = *remote;
    }
    out.push_back(end);
  }
  return out;
}

Result<PcieRelation> Nvml::common_ancestor(const PciAddress& a, const PciAddress& b) {
  void* da = handle(a);
  void* db = handle(b);
  int level = 0;
  if (da == nullptr || db == nullptr || api_->ancestor == nullptr ||
      api_->ancestor(da, db, &level) != kSuccess)
    return Error{"NVML cannot relate " + a.to_string() + " and " + b.to_string()};
  for (const auto r :
       {PcieRelation::kSameBoard, PcieRelation::kSingleSwitch, PcieRelation::kMultipleSwitches,
        PcieRelation::kHostBridge, PcieRelation::kSameNuma, PcieRelation::kSystem}) {
    if (static_cast<int>(r) == level) return r;
  }
  return PcieRelation::kSystem;
}

Result<std::vector<std::string>> Nvml::watch_xids(const std::vector<PciAddress>& gpus) {
  if (!api_->event_set_create || !api_->register_events || !api_->event_wait)
    return Error{"NVML has no event functions"};
  if (api_->events == nullptr && api_->event_set_create(&api_->events) != kSuccess)
    return Error{"nvmlEventSetCreate failed"};
  std::vector<std::string> unwatched;
  std::size_t registered = 0;
  for (const auto& gpu : gpus) {
    void* device = handle(gpu);
    if (device == nullptr) continue;
    // Registered again on every call: a GPU back from a reset may have lost its registration.
    if (const int rc = api_->register_events(device, kXidCritical, api_->events); rc != kSuccess) {
      unwatched.push_back(gpu.to_string() + " (NVML error " + std::to_string(rc) + ")");
      continue;
    }
    ++registered;
    const bool known = std::any_of(api_->watched.begin(), api_->watched.end(),
                                   [&](const auto& w) { return w.first == device; });
    if (!known) api_->watched.emplace_back(device, gpu);
  }
  if (registered == 0 && !unwatched.empty())
    return Error{"no GPU's Xid events can be watched: " + join(unwatched, ", ")};
  return unwatched;
}

Result<std::optional<XidEvent>> Nvml::wait_xid(unsigned timeout_ms) {
  if (api_->events == nullptr) return Error{"no Xid events are watched"};
  EventData data{};
  const int rc = api_->event_wait(api_->events, &data, timeout_ms);
  if (rc == kTimeout) return std::optional<XidEvent>();
  if (rc != kSuccess) return Error{"nvmlEventSetWait failed (error " + std::to_string(rc) + ")"};
  if ((data.event_type & kXidCritical) == 0) return std::optional<XidEvent>();
  XidEvent event;
  for (const auto& [device, bus] : api_->watched) {
    if (device == data.device) event.gpu = bus;
  }
  event.xid = data.event_data;
  if (data.gpu_instance != kNoInstance) event.gpu_instance = data.gpu_instance;
  if (data.compute_instance != kNoInstance) event.compute_instance = data.compute_instance;
  return std::optional<XidEvent>(event);
}

bool Nvml::answers(const PciAddress& gpu) {
  void* device = handle(gpu);
  char uuid[96];
  return device != nullptr &&
         (api_->uuid == nullptr || api_->uuid(device, uuid, sizeof uuid) != 15 /* GPU_IS_LOST */);
}

}  // namespace gcr
