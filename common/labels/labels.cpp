#include "labels/labels.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "labels/nvlink_sets.h"
#include "mig/mig_strategy.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxNameOrValue = 63;
constexpr std::size_t kMaxPrefix = 253;
constexpr std::string_view kShared = "-SHARED";

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_value_char(char c) {
  return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

// [A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?, at most 63 characters.
bool is_label_word(std::string_view s) {
  return !s.empty() && s.size() <= kMaxNameOrValue && is_alnum(s.front()) && is_alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), is_value_char);
}

// A DNS-1123 subdomain: lower-case labels of [-a-z0-9] with alphanumerics at both ends, joined
// by dots, at most 253 characters.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxPrefix) return false;
  const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (const auto part : split(s, '.')) {
    if (part.empty() || !lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
    if (!std::all_of(part.begin(), part.end(), [&](char c) { return lower_alnum(c) || c == '-'; }))
      return false;
  }
  return true;
}

void trim_to_alnum(std::string& s) {
  while (!s.empty() && !is_alnum(s.back())) s.pop_back();
  const auto first = std::find_if(s.begin(), s.end(), is_alnum);
  s.erase(s.begin(), first);
}

// GFD's product value: the model (kUnknownProduct when nothing of it is left), with
// "-MIG-<profile>", and "-SHARED" when GPUs are shared, the suffix kept whole when the name must
// be cut.
std::string product_value(const std::string& model, const std::string& mig_profile, bool shared) {
  std::string name = label_value(model);
  if (name.empty()) name = kUnknownProduct;
  if (!mig_profile.empty()) name = label_value(name + "-MIG-" + mig_profile);
  if (!shared) return name;
  if (name.size() > kMaxNameOrValue - kShared.size()) {
    name.resize(kMaxNameOrValue - kShared.size());
    trim_to_alnum(name);
  }
  return name + std::string(kShared);
}

std::string number(unsigned long long n) {
  return std::to_string(n);
}

// `version`'s dot-separated parts as prefix + parts[i], and the whole as prefix + "full" when
// `full` names it.
void add_version(Labels& out, const std::string& prefix, const std::string& version,
                 const std::vector<const char*>& parts, const char* full) {
  const auto fields = split(version, '.');
  for (std::size_t i = 0; i < parts.size() && i < fields.size(); ++i) {
    const std::string value = label_value(fields[i]);
    if (!value.empty()) out[prefix + parts[i]] = value;
  }
  // A part the version lacks is empty, as GFD writes it (driver 550.120: revision "").
  for (std::size_t i = fields.size(); i < parts.size() && !fields.empty(); ++i)
    out[prefix + parts[i]] = "";
  const std::string whole = label_value(version);
  if (full != nullptr && !whole.empty()) out[prefix + full] = whole;
}

void add_driver_labels(Labels& out, const NodeLabelFacts& facts) {
  // GFD writes the older names beside the newer ones, and selectors still use them.
  if (facts.driver_version) {
    add_version(out, "nvidia.com/cuda.driver-version.", *facts.driver_version,
                {"major", "minor", "revision"}, "full");
    add_version(out, "nvidia.com/cuda.driver.", *facts.driver_version, {"major", "minor", "rev"},
                nullptr);
  }
  if (facts.cuda_version) {
    add_version(out, "nvidia.com/cuda.runtime-version.", *facts.cuda_version, {"major", "minor"},
                "full");
    add_version(out, "nvidia.com/cuda.runtime.", *facts.cuda_version, {"major", "minor"}, nullptr);
  }
  // GFD's "unknown" where the DMI product name cannot be read (arm64 and some VMs).
  out["nvidia.com/gpu.machine"] = facts.machine ? label_value(*facts.machine) : "unknown";
}

void add_sharing_labels(Labels& out, const Config::DevicePlugin& plugin) {
  // As GFD: no label for `none`, so that a selector on the label's existence means MIG.
  if (plugin.mig_strategy != "none") out["nvidia.com/mig.strategy"] = plugin.mig_strategy;
  out["nvidia.com/mps.capable"] = plugin.sharing == "mps" ? "true" : "false";
}

// GFD's nvidia.com/gpu.mode, from the GPUs' PCI class: compute (a 3D controller, as data-center
// GPUs are), graphics (a VGA controller), or unknown (a class not known, or not one for all).
void add_mode_label(Labels& out, const std::vector<GpuLabelFacts>& gpus) {
  constexpr std::uint32_t kVgaController = 0x030000;
  constexpr std::uint32_t k3dController = 0x030200;
  const auto first = gpus.front().pci_class;
  const bool one_class = first && std::all_of(gpus.begin(), gpus.end(),
                                              [&](const auto& g) { return g.pci_class == first; });
  std::string mode = "unknown";
  if (one_class && *first == kVgaController) mode = "graphics";
  if (one_class && *first == k3dController) mode = "compute";
  out["nvidia.com/gpu.mode"] = mode;
}

// A GPU as the MIG strategies see it.
MigGpu mig_gpu(const GpuLabelFacts& gpu) {
  return MigGpu{gpu.index, gpu.uuid, gpu.mig_mode, &gpu.migs};
}

std::vector<MigGpu> mig_gpus(const std::vector<GpuLabelFacts>& gpus) {
  std::vector<MigGpu> out;
  for (const auto& gpu : gpus) out.push_back(mig_gpu(gpu));
  return out;
}

// How many times each device of the GPU is advertised (replicas-by-gpu, else replicas).
unsigned long long replicas_of(const GpuLabelFacts& gpu, const Config::DevicePlugin& plugin) {
  return static_cast<unsigned long long>(plugin.replicas_for(gpu.index, gpu.model));
}

// What nvidia.com/gpu stands for under the MIG strategy: whole GPUs, (single) MIG devices of one
// profile, or (single, GPUs not laid out for it) nothing: GFD's "-MIG-INVALID"; (single, a GPU's
// MIG mode not known) not known, so not described.
struct GpuResource {
  enum class Kind { kWholeGpus, kMigDevices, kInvalid, kUnknown } kind = Kind::kWholeGpus;
  unsigned long long count = 0;
  // How many times one device is advertised, as GFD's gpu.replicas says it: the described
  // device's replicas; 0 where no GPU is advertised whole (mixed, every GPU in MIG mode: GFD's
  // labels of MIG-enabled GPUs, "sharing disabled"). kInvalid: the first whole GPU's (0 without
  // one), which GFD's sharing-strategy still tells, under its "0" replicas label.
  unsigned long long replicas = 1;
  const GpuLabelFacts* described = nullptr;  // the GPU the labels describe
  const MigDevice* mig = nullptr;            // kMigDevices: one of them
};

GpuResource single_resource(const NodeLabelFacts& facts, const Config::DevicePlugin& plugin) {
  GpuResource r;
  if (!facts.mig_modes_known) {
    r.kind = GpuResource::Kind::kUnknown;
    return r;
  }
  const auto layout = single_layout(mig_gpus(facts.gpus));
  if (layout && *layout == SingleLayout::kWholeGpus) return r;
  const auto in_mode = std::find_if(facts.gpus.begin(), facts.gpus.end(),
                                    [](const auto& g) { return in_mig_mode(mig_gpu(g)); });
  r.described = &*in_mode;
  if (!layout) {
    r.kind = GpuResource::Kind::kInvalid;
    const auto whole = std::find_if(facts.gpus.begin(), facts.gpus.end(),
                                    [](const auto& g) { return !in_mig_mode(mig_gpu(g)); });
    r.replicas = whole == facts.gpus.end() ? 0 : replicas_of(*whole, plugin);
    return r;
  }
  r.kind = GpuResource::Kind::kMigDevices;
  r.mig = &in_mode->migs.front();
  r.replicas = replicas_of(*in_mode, plugin);
  for (const auto& gpu : facts.gpus) r.count += gpu.migs.size();
  return r;
}

GpuResource gpu_resource(const NodeLabelFacts& facts, const Config::DevicePlugin& plugin) {
  if (plugin.mig_strategy == "single") {
    auto r = single_resource(facts, plugin);
    if (r.kind != GpuResource::Kind::kWholeGpus) return r;
  }
  // Every GPU is counted, as GFD counts them, those in MIG mode under mixed too (which are not
  // advertised whole); the replicas are the first whole GPU's.
  GpuResource r;
  r.described = &facts.gpus.front();
  r.count = facts.gpus.size();
  const bool mixed = plugin.mig_strategy == "mixed";
  const auto whole = std::find_if(facts.gpus.begin(), facts.gpus.end(), [&](const auto& gpu) {
    return !mixed || !in_mig_mode(mig_gpu(gpu));
  });
  r.replicas = whole == facts.gpus.end() ? 0 : replicas_of(*whole, plugin);
  return r;
}

// GFD's labels of a MIG device's share: <resource>.multiprocessors, .slices.gi, .slices.ci,
// .engines.{copy,decoder,encoder,jpeg,ofa}.
void add_mig_attribute_labels(Labels& out, const std::string& resource, const MigDevice& mig) {
  const auto& a = mig.attributes;
  out[resource + ".multiprocessors"] = number(a.multiprocessors);
  out[resource + ".slices.gi"] = number(mig.gpu_slices);
  out[resource + ".slices.ci"] = number(a.compute_slices);
  out[resource + ".engines.copy"] = number(a.copy_engines);
  out[resource + ".engines.decoder"] = number(a.decoders);
  out[resource + ".engines.encoder"] = number(a.encoders);
  out[resource + ".engines.jpeg"] = number(a.jpegs);
  out[resource + ".engines.ofa"] = number(a.ofas);
}

void add_arch_labels(Labels& out, const GpuLabelFacts& gpu) {
  if (!gpu.arch) return;
  const auto parts = split(*gpu.arch, '.');
  const auto major = parts.size() == 2 ? parse_decimal(parts[0]) : std::nullopt;
  const auto minor = parts.size() == 2 ? parse_decimal(parts[1]) : std::nullopt;
  if (!major || !minor) return;
  out["nvidia.com/gpu.compute.major"] = number(*major);
  out["nvidia.com/gpu.compute.minor"] = number(*minor);
  out["nvidia.com/gpu.family"] =
      gpu_family(static_cast<unsigned>(*major), static_cast<unsigned>(*minor));
}

// A resource's replicas and sharing strategy, as GFD labels every resource: `-SHARED` on its
// product and the plugin's strategy where one device is advertised more than once.
void add_sharing_of(Labels& out, const std::string& resource, unsigned long long replicas,
                    const Config::DevicePlugin& plugin) {
  out[resource + ".replicas"] = number(replicas);
  out[resource + ".sharing-strategy"] = replicas > 1 ? sharing_strategy(plugin) : "none";
}

// What describes a device of nvidia.com/gpu: the described GPU's product, memory and
// architecture (a MIG device's profile, memory and share with single), the devices' count and
// replicas. Single with GPUs not laid out for it: GFD's "<model>-MIG-INVALID", all counts 0.
void add_resource_labels(Labels& out, const GpuResource& r, const Config::DevicePlugin& plugin) {
  const auto& gpu = *r.described;
  add_arch_labels(out, gpu);
  if (r.kind == GpuResource::Kind::kInvalid) {
    out["nvidia.com/gpu.product"] = product_value(gpu.model, "INVALID", false);
    for (const char* name : {"count", "replicas", "memory"})
      out[std::string("nvidia.com/gpu.") + name] = "0";
    out["nvidia.com/gpu.sharing-strategy"] = r.replicas > 1 ? sharing_strategy(plugin) : "none";
    return;
  }
  out["nvidia.com/gpu.product"] =
      product_value(gpu.model, r.mig != nullptr ? r.mig->profile() : "", r.replicas > 1);
  out["nvidia.com/gpu.count"] = number(r.count);
  add_sharing_of(out, "nvidia.com/gpu", r.replicas, plugin);
  if (r.mig != nullptr) {
    out["nvidia.com/gpu.memory"] = number(r.mig->memory_mb);
    add_mig_attribute_labels(out, "nvidia.com/gpu", *r.mig);
  } else if (gpu.memory_mib) {
    out["nvidia.com/gpu.memory"] = number(*gpu.memory_mib);
  }
}

void add_gpu_labels(Labels& out, const NodeLabelFacts& facts, const Config::DevicePlugin& plugin) {
  const auto r = gpu_resource(facts, plugin);
  if (r.kind != GpuResource::Kind::kUnknown) add_resource_labels(out, r, plugin);
  std::set<std::string> models;
  unsigned long long healthy = 0;
  bool mig_known = true, mig_capable = false;
  for (const auto& gpu : facts.gpus) {
    models.insert(gpu.model);
    healthy += gpu.healthy ? 1 : 0;
    mig_known = mig_known && gpu.mig_capable.has_value();
    mig_capable = mig_capable || gpu.mig_capable.value_or(false);
  }
  out["nvidia.com/gpu.models"] = number(models.size());
  out["nvidia.com/gpu.healthy"] = number(healthy);
  if (mig_known || mig_capable) out["nvidia.com/mig.capable"] = mig_capable ? "true" : "false";
}

// mig-strategy mixed: per profile, as GFD names them (nvidia.com/mig-<profile>.*).
void add_mig_resource_labels(Labels& out, const NodeLabelFacts& facts,
                             const Config::DevicePlugin& plugin) {
  if (plugin.mig_strategy != "mixed") return;
  std::map<std::string, std::pair<const GpuLabelFacts*, const MigDevice*>> first_of;
  std::map<std::string, unsigned long long> count;
  for (const auto& gpu : facts.gpus) {
    for (const auto& mig : gpu.migs) {
      if (!mig.whole_gpu_instance()) continue;  // not a resource, as devices_of says
      first_of.emplace(mig.profile(), std::pair{&gpu, &mig});
      ++count[mig.profile()];
    }
  }
  for (const auto& [profile, where] : first_of) {
    const std::string resource = "nvidia.com/mig-" + profile;
    const auto replicas = replicas_of(*where.first, plugin);
    out[resource + ".count"] = number(count[profile]);
    add_sharing_of(out, resource, replicas, plugin);
    out[resource + ".memory"] = number(where.second->memory_mb);
    out[resource + ".product"] = product_value(where.first->model, profile, replicas > 1);
    add_mig_attribute_labels(out, resource, *where.second);
  }
}

// GFD's vGPU labels: present when a GPU is a vGPU, the host driver as the last one names it.
void add_vgpu_labels(Labels& out, const std::vector<GpuLabelFacts>& gpus) {
  for (const auto& gpu : gpus) {
    if (!gpu.vgpu) continue;
    out["nvidia.com/vgpu.present"] = "true";
    const std::string version = label_value(gpu.vgpu->host_driver_version);
    const std::string branch = label_value(gpu.vgpu->host_driver_branch);
    if (!version.empty()) out["nvidia.com/vgpu.host-driver-version"] = version;
    if (!branch.empty()) out["nvidia.com/vgpu.host-driver-branch"] = branch;
  }
}

// GFD's nvidia.com/gpu.clique: the one fabric clique of the GPUs attached to a multi-node
// NVLink fabric. GPUs in several give none, said in `left_out`.
void add_clique_label(Labels& out, const std::vector<GpuLabelFacts>& gpus,
                      std::vector<std::string>& left_out) {
  std::set<std::string> cliques;
  for (const auto& gpu : gpus) {
    if (!gpu.fabric_known) return;  // a GPU that may be in another clique
    if (gpu.fabric_clique) cliques.insert(*gpu.fabric_clique);
  }
  if (cliques.size() == 1) out["nvidia.com/gpu.clique"] = *cliques.begin();
  if (cliques.size() > 1)
    left_out.push_back("label nvidia.com/gpu.clique left out: the GPUs are in " +
                       std::to_string(cliques.size()) + " fabric cliques (" +
                       join(std::vector<std::string>(cliques.begin(), cliques.end()), ", ") + ")");
}

// NVLink sets and the NVSwitch fabric among the Healthy GPUs, from NVML's topology.
void add_nvlink_labels(Labels& out, const NodeLabelFacts& facts) {
  if (!facts.topology) return;
  std::vector<std::size_t> healthy;
  for (const auto& gpu : facts.gpus) {
    const auto at = facts.topology->index_of(gpu.uuid);
    if (gpu.healthy && at) healthy.push_back(*at);
  }
  const auto sets = nvlink_sets(*facts.topology, healthy);
  out["nvidia.com/gpu.nvlink.largest-clique"] = number(sets.largest);
  out["nvidia.com/gpu.nvlink.clique-count"] = number(sets.count);
  out["nvidia.com/gpu.nvswitch"] = all_on_nvswitch(*facts.topology, healthy) ? "true" : "false";
}

}  // namespace

std::string sharing_strategy(const Config::DevicePlugin& plugin) {
  if (plugin.sharing == "mps") return "mps";
  return plugin.shares_gpus() ? "time-slicing" : "none";
}

Labels node_labels(const NodeLabelFacts& facts, const Config::DevicePlugin& plugin,
                   std::vector<std::string>* left_out) {
  Labels out;
  std::vector<std::string> lines;
  add_sharing_labels(out, plugin);
  add_driver_labels(out, facts);
  if (!facts.gpus.empty()) {
    add_gpu_labels(out, facts, plugin);
    add_mode_label(out, facts.gpus);
    add_mig_resource_labels(out, facts, plugin);
    add_nvlink_labels(out, facts);
    add_clique_label(out, facts.gpus, lines);
    add_vgpu_labels(out, facts.gpus);
  }
  auto dropped = drop_invalid_labels(out);
  lines.insert(lines.end(), dropped.begin(), dropped.end());
  if (left_out != nullptr) left_out->insert(left_out->end(), lines.begin(), lines.end());
  return out;
}

std::vector<std::string> drop_invalid_labels(Labels& labels) {
  std::vector<std::string> lines;
  for (auto it = labels.begin(); it != labels.end();) {
    if (is_label_name(it->first) && is_label_value(it->second)) {
      ++it;
      continue;
    }
    lines.push_back("label left out, not valid in Kubernetes: " +
                    quote(it->first + "=" + it->second, 128));
    it = labels.erase(it);
  }
  return lines;
}

bool is_label_name(std::string_view name) {
  const auto slash = name.rfind('/');
  if (slash == std::string_view::npos) return is_label_word(name);
  return is_dns_subdomain(name.substr(0, slash)) && is_label_word(name.substr(slash + 1));
}

bool is_label_value(std::string_view value) {
  return value.empty() || is_label_word(value);
}

std::string label_value(std::string_view raw) {
  // As GFD's sanitise: characters outside [A-Za-z0-9-_. ] dropped (tabs and newlines too),
  // each run of spaces one '-'.
  std::string out;
  bool gap = false;
  for (const char c : raw) {
    if (c == ' ') {
      gap = true;
    } else if (is_value_char(c)) {
      if (gap && !out.empty()) out += '-';
      gap = false;
      out += c;
    }
  }
  trim_to_alnum(out);
  if (out.size() > kMaxNameOrValue) {
    out.resize(kMaxNameOrValue);
    trim_to_alnum(out);
  }
  return out;
}

std::string gpu_family(unsigned major, unsigned minor) {
  switch (major) {
    case 1:
      return "tesla";
    case 2:
      return "fermi";
    case 3:
      return "kepler";
    case 5:
      return "maxwell";
    case 6:
      return "pascal";
    case 7:
      return minor < 5 ? "volta" : "turing";
    case 8:
      return minor < 9 ? "ampere" : "ada-lovelace";
    case 9:
      return "hopper";
    case 10:
    case 11:
    case 12:
      return "blackwell";
    default:
      return "undefined";
  }
}

std::string labels_text(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) out += name + "=" + value + "\n";
  return out;
}

}  // namespace gcr
