#include "labels/labels.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "labels/nvlink_sets.h"

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
  if (facts.machine) {
    const std::string machine = label_value(*facts.machine);
    if (!machine.empty()) out["nvidia.com/gpu.machine"] = machine;
  }
}

void add_sharing_labels(Labels& out, const Config::DevicePlugin& plugin) {
  out["nvidia.com/mig.strategy"] = plugin.mig_strategy;
  out["nvidia.com/gpu.sharing-strategy"] = sharing_strategy(plugin);
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

// mig-strategy single as the plugin advertises it: every GPU in MIG mode, one profile.
std::optional<MigDevice> single_profile(const std::vector<GpuLabelFacts>& gpus) {
  std::set<std::string> profiles;
  for (const auto& gpu : gpus) {
    if (gpu.migs.empty()) return std::nullopt;
    for (const auto& m : gpu.migs) profiles.insert(m.profile());
  }
  if (profiles.size() != 1) return std::nullopt;
  return gpus.front().migs.front();
}

// What nvidia.com/gpu stands for under the MIG strategy: whole GPUs, or (single) MIG devices.
struct GpuResource {
  unsigned long long count = 0;
  std::string mig_profile;                       // "" for whole GPUs
  std::optional<unsigned long long> memory_mib;  // of one device
};

GpuResource gpu_resource(const NodeLabelFacts& facts, const Config::DevicePlugin& plugin) {
  GpuResource r;
  const auto& first = facts.gpus.front();
  r.memory_mib = first.memory_mib;
  if (plugin.mig_strategy == "single") {
    if (const auto mig = single_profile(facts.gpus)) {
      for (const auto& gpu : facts.gpus) r.count += gpu.migs.size();
      r.mig_profile = mig->profile();
      r.memory_mib = mig->memory_mb;
      return r;
    }
  }
  for (const auto& gpu : facts.gpus) {
    if (plugin.mig_strategy != "mixed" || gpu.migs.empty()) ++r.count;
  }
  return r;
}

// Every device advertised as nvidia.com/gpu, each GPU's replicas counted (replicas-by-gpu).
unsigned long long advertised(const NodeLabelFacts& facts, const Config::DevicePlugin& plugin) {
  const bool single = plugin.mig_strategy == "single" && single_profile(facts.gpus).has_value();
  unsigned long long total = 0;
  for (std::size_t i = 0; i < facts.gpus.size(); ++i) {
    const auto& gpu = facts.gpus[i];
    const unsigned long long devices =
        single ? gpu.migs.size() : (plugin.mig_strategy != "mixed" || gpu.migs.empty() ? 1 : 0);
    total += devices * static_cast<unsigned long long>(
                           plugin.replicas_for(static_cast<unsigned>(i), gpu.model));
  }
  return total;
}

// What describes a device of nvidia.com/gpu: GPU 0's product, memory and architecture, the
// devices' count and replicas.
void add_resource_labels(Labels& out, const GpuLabelFacts& first, const GpuResource& r, bool shared,
                         unsigned long long replicas) {
  out["nvidia.com/gpu.product"] = product_value(first.model, r.mig_profile, shared);
  out["nvidia.com/gpu.count"] = number(r.count);
  out["nvidia.com/gpu.replicas"] = number(replicas);
  if (r.memory_mib) out["nvidia.com/gpu.memory"] = number(*r.memory_mib);
  if (!first.arch) return;
  const auto parts = split(*first.arch, '.');
  const auto major = parts.size() == 2 ? parse_decimal(parts[0]) : std::nullopt;
  const auto minor = parts.size() == 2 ? parse_decimal(parts[1]) : std::nullopt;
  if (!major || !minor) return;
  out["nvidia.com/gpu.compute.major"] = number(*major);
  out["nvidia.com/gpu.compute.minor"] = number(*minor);
  out["nvidia.com/gpu.family"] =
      gpu_family(static_cast<unsigned>(*major), static_cast<unsigned>(*minor));
}

void add_gpu_labels(Labels& out, const NodeLabelFacts& facts, const Config::DevicePlugin& plugin) {
  const auto& first = facts.gpus.front();
  const bool shared = plugin.shares_gpus();
  const auto r = gpu_resource(facts, plugin);
  // No device of nvidia.com/gpu (mixed, every GPU in MIG mode): nothing describes one, as GFD
  // writes nothing for it; a selector on the product would bring pods that wait forever.
  if (r.count > 0) add_resource_labels(out, first, r, shared, advertised(facts, plugin));
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
      first_of.emplace(mig.profile(), std::pair{&gpu, &mig});
      ++count[mig.profile()];
    }
  }
  const auto replicas = static_cast<unsigned long long>(plugin.replicas);
  for (const auto& [profile, where] : first_of) {
    const std::string prefix = "nvidia.com/mig-" + profile + ".";
    out[prefix + "count"] = number(count[profile]);
    out[prefix + "replicas"] = number(count[profile] * replicas);
    out[prefix + "memory"] = number(where.second->memory_mb);
    out[prefix + "product"] = product_value(where.first->model, profile, plugin.replicas > 1);
  }
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
  add_sharing_labels(out, plugin);
  add_driver_labels(out, facts);
  if (!facts.gpus.empty()) {
    add_gpu_labels(out, facts, plugin);
    add_mode_label(out, facts.gpus);
    add_mig_resource_labels(out, facts, plugin);
    add_nvlink_labels(out, facts);
  }
  auto dropped = drop_invalid_labels(out);
  if (left_out != nullptr) left_out->insert(left_out->end(), dropped.begin(), dropped.end());
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
  std::string out;
  bool gap = false;
  for (const char c : raw) {
    if (!is_value_char(c)) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += '-';
    gap = false;
    out += c;
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
