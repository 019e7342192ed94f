#include "driver/probe.h"

#include "base/child_process.h"
#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

constexpr int kProbeTimeoutSeconds = 60;
constexpr std::size_t kMaxProbeOutput = 1 << 20;

std::optional<std::string> optional_string(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

Result<ProbeAnswers> parse_probe_answers(const std::string& json_text) {
  auto doc = parse_json_strict(json_text);
  if (!doc || !doc->is_object()) return Error{"unreadable answer from gpu-ctk info"};
  ProbeAnswers answers;
  answers.cuda = optional_string(*doc, "cuda_version");
  const auto gpus = doc->find("gpus");
  if (gpus == doc->end() || !gpus->is_array()) return answers;
  for (const auto& gpu : *gpus) {
    const auto uuid = gpu.is_object() ? optional_string(gpu, "uuid") : std::nullopt;
    if (!uuid) continue;
    GpuFacts& facts = answers.gpus[*uuid];
    facts.arch = optional_string(gpu, "arch");
    facts.brand = optional_string(gpu, "brand");
    const auto migs = gpu.find("mig");
    if (migs == gpu.end() || !migs->is_array()) continue;
    for (const auto& m : *migs) {
      if (!m.is_object() || !m.value("uuid", Json()).is_string()) continue;
      MigDevice mig;
      mig.index = m.value("index", 0u);
      mig.uuid = m.value("uuid", "");
      mig.gpu_instance = m.value("gpu_instance", 0u);
      mig.compute_instance = m.value("compute_instance", 0u);
      facts.migs.push_back(std::move(mig));
    }
  }
  return answers;
}

Result<ProbeAnswers> CtkProbe::ask(const char* what) {
  const std::vector<std::string> argv{
      config_.hooks.ctk_path,  "info", "--json", "--driver-root", config_.driver.root, "--dev-root",
      config_.driver.dev_root, what};
  if (auto s = TrustCheck().program(config_.hooks.ctk_path); !s)
    return s.error().wrap("cannot query the driver: [hooks] ctk-path refused");
  auto result = run_child(argv, minimal_environment(), kProbeTimeoutSeconds, kMaxProbeOutput);
  if (!result) return result.error().wrap("cannot query the driver");
  if (result->exit_code != 0) {
    return Error{"cannot query the driver: " + printable(last_line(result->err)) + " (" +
                 config_.hooks.ctk_path + ")"};
  }
  return parse_probe_answers(result->out);
}

Result<std::optional<std::string>> CtkProbe::cuda_version(const std::string& driver_version) {
  const std::string key = config_.driver.root + "|" + driver_version;
  const std::string cache = config_.runtime.state_dir + "/cuda-version.json";
  if (auto text = read_regular_file(cache, 4096)) {
    auto doc = parse_json_strict(*text);
    if (doc && doc->is_object() && doc->value("key", "") == key && (*doc)["cuda"].is_string()) {
      return std::optional<std::string>((*doc)["cuda"].get<std::string>());
    }
  }
  auto answers = ask("--cuda");
  if (!answers) return answers.error();
  if (answers->cuda && make_directories(config_.runtime.state_dir)) {
    if (auto dir = open_directory(config_.runtime.state_dir)) {
      const Json doc = {{"key", key}, {"cuda", *answers->cuda}};
      (void)write_file_atomic_at(dir->get(), "cuda-version.json", json_text(doc), FileOwner{0644});
    }
  }
  return answers->cuda;
}

Result<std::map<std::string, GpuFacts>> CtkProbe::gpu_facts() {
  if (!gpu_facts_) {
    auto answers = ask("--nvml");
    gpu_facts_ = answers ? Result<std::map<std::string, GpuFacts>>(std::move(answers->gpus))
                         : Result<std::map<std::string, GpuFacts>>(answers.error());
  }
  return *gpu_facts_;
}

std::string MigDevice::profile() const {
  constexpr unsigned long long kMiB = 1ULL << 20, kGiB = 1ULL << 30, kEighths = 8;
  unsigned long long gb = (memory_mb + 1023) / 1024;
  if (gpu_memory_bytes > 0) {
    const unsigned long long eighths =
        (memory_mb * kMiB * kEighths + gpu_memory_bytes - 1) / gpu_memory_bytes;
    const unsigned long long gpu_gib = (gpu_memory_bytes + kGiB - 1) / kGiB;
    gb = (eighths * gpu_gib * 2 + kEighths) / (2 * kEighths);  // rounded, halves up
  }
  const unsigned compute = attributes.compute_slices;
  std::string name = std::to_string(gpu_slices) + "g." + std::to_string(gb) + "gb";
  if (compute != 0 && compute != gpu_slices) name = std::to_string(compute) + "c." + name;
  return name + profile_suffix;
}

}  // namespace gcr
