#include "driver_probe.h"

#include "child_process.h"
#include "injected_hooks.h"
#include "strict_json.h"
#include "text.h"

namespace gcr {
namespace {

constexpr int kProbeTimeoutSeconds = 60;
constexpr std::size_t kMaxProbeOutput = 1 << 20;

std::optional<std::string> optional_string(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string last_line(const std::string& text) {
  const auto trimmed = trim(text);
  const auto nl = trimmed.rfind('\n');
  return std::string(nl == std::string_view::npos ? trimmed : trimmed.substr(nl + 1));
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
    if (uuid)
      answers.gpus[*uuid] = GpuFacts{optional_string(gpu, "arch"), optional_string(gpu, "brand")};
  }
  return answers;
}

Result<ProbeAnswers> CtkProbe::query(bool cuda, bool nvml) {
  std::vector<std::string> argv{
      config_.hooks.ctk_path, "info", "--json", "--driver-root", config_.driver.root, "--dev-root",
      config_.driver.dev_root};
  if (cuda) argv.push_back("--cuda");
  if (nvml) argv.push_back("--nvml");
  auto result = run_child(argv, hook_environment(), kProbeTimeoutSeconds, kMaxProbeOutput);
  if (!result) return result.error().wrap("cannot query the driver");
  if (result->exit_code != 0) {
    return Error{"cannot query the driver: " + printable(last_line(result->err)) + " (" +
                 config_.hooks.ctk_path + ")"};
  }
  return parse_probe_answers(result->out);
}

}  // namespace gcr
