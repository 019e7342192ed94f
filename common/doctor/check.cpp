#include "doctor/check.h"

#include <algorithm>

#include "base/text.h"

namespace gcr {

void Findings::add(CheckLevel level, std::string area, std::string message, std::string evidence,
                   std::string fix) {
  checks_.push_back(
      {level, std::move(area), std::move(message), std::move(evidence), std::move(fix)});
}

void Findings::ok(std::string area, std::string message, std::string evidence) {
  add(CheckLevel::kOk, std::move(area), std::move(message), std::move(evidence), "");
}

void Findings::warn(std::string area, std::string message, std::string evidence, std::string fix) {
  add(CheckLevel::kWarn, std::move(area), std::move(message), std::move(evidence), std::move(fix));
}

void Findings::fail(std::string area, std::string message, std::string evidence, std::string fix) {
  add(CheckLevel::kFail, std::move(area), std::move(message), std::move(evidence), std::move(fix));
}

bool Findings::failed() const {
  return std::any_of(checks_.begin(), checks_.end(),
                     [](const Check& c) { return c.level == CheckLevel::kFail; });
}

const char* level_name(CheckLevel level) {
  switch (level) {
    case CheckLevel::kOk:
      return "ok";
    case CheckLevel::kWarn:
      return "warn";
    case CheckLevel::kFail:
      return "FAIL";
  }
  return "?";
}

std::string check_line(const Check& check) {
  std::string line = level_name(check.level);
  line.resize(6, ' ');
  line += check.area + ": " + check.message;
  // Errors often name their file already; the evidence is not said twice.
  if (!check.evidence.empty() && check.message.find(check.evidence) == std::string::npos)
    line += " (" + check.evidence + ")";
  if (!check.fix.empty()) line += "; fix: " + check.fix;
  return line;
}

Json findings_json(const Findings& findings) {
  Json checks = Json::array();
  for (const auto& c : findings.all()) {
    checks.push_back(Json{{"level", to_lower(level_name(c.level))},
                          {"area", c.area},
                          {"message", c.message},
                          {"evidence", c.evidence},
                          {"fix", c.fix}});
  }
  return Json{{"ok", !findings.failed()}, {"checks", checks}};
}

}  // namespace gcr
