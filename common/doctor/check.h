// One finding of gpu-ctk doctor: how bad, which part of the node, what was found, the evidence
// (a path, a value, a command's answer) and what to type or write to fix it.
#pragma once

#include <string>
#include <vector>

#include "json/strict_json.h"

namespace gcr {

enum class CheckLevel { kOk, kWarn, kFail };

struct Check {
  CheckLevel level = CheckLevel::kOk;
  std::string area;      // driver, runtime, docker, containerd, crio, podman, cdi, kubernetes, run
  std::string message;   // what was found
  std::string evidence;  // where: a path, a value
  std::string fix;       // a command or a config line; "" when nothing is to be done
};

// The checks so far, in the order they ran.
class Findings {
 public:
  void add(CheckLevel level, std::string area, std::string message, std::string evidence,
           std::string fix);
  void ok(std::string area, std::string message, std::string evidence = "");
  void warn(std::string area, std::string message, std::string evidence, std::string fix);
  void fail(std::string area, std::string message, std::string evidence, std::string fix);
  [[nodiscard]] const std::vector<Check>& all() const { return checks_; }
  [[nodiscard]] bool failed() const;

 private:
  std::vector<Check> checks_;
};

[[nodiscard]] const char* level_name(CheckLevel level);  // "ok", "warn", "FAIL"

// `ok    driver: 4 GPUs (proc/driver/nvidia/gpus)`,
// `FAIL  docker: ... (evidence); fix: ...`
[[nodiscard]] std::string check_line(const Check& check);

// {"ok": bool, "checks": [{"level" ("ok", "warn", "fail"), "area", "message", "evidence",
// "fix"}...]}
[[nodiscard]] Json findings_json(const Findings& findings);

}  // namespace gcr
