#include "injection/cdi_resolver.h"

#include "base/child_process.h"
#include "base/text.h"
#include "base/trust.h"
#include "edits/edits_json.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

constexpr int kResolveTimeoutSeconds = 30;
constexpr std::size_t kMaxResolveOutput = 16u << 20;

}  // namespace

Result<ContainerEdits> CtkCdiResolver::resolve(const std::vector<std::string>& names) {
  std::vector<std::string> argv{config_.hooks.ctk_path, "cdi", "resolve"};
  for (const auto& dir : config_.cdi.spec_dirs) argv.insert(argv.end(), {"--spec-dir", dir});
  argv.push_back("--");
  argv.insert(argv.end(), names.begin(), names.end());
  if (auto s = TrustCheck().program(config_.hooks.ctk_path); !s)
    return s.error().wrap("cannot resolve CDI devices: [hooks] ctk-path refused");
  auto result = run_child(argv, minimal_environment(), kResolveTimeoutSeconds, kMaxResolveOutput);
  if (!result) return result.error().wrap("cannot resolve CDI devices");
  if (result->exit_code != 0) {
    std::string why = last_line(result->err);
    const std::string prefix = "gpu-ctk cdi: ";
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    return Error{printable(why, 1024)};
  }
  auto doc = parse_json_strict(result->out);
  if (!doc || !doc->is_object() || !doc->contains("containerEdits")) {
    return Error{"cannot resolve CDI devices: unreadable answer from " + config_.hooks.ctk_path};
  }
  return edits_from_json(doc->at("containerEdits"), "containerEdits");
}

}  // namespace gcr
