#include "requirements_check.h"

#include <algorithm>

namespace gcr {
namespace {

bool any_uses(const std::vector<Requirement>& rs, std::initializer_list<Property> props) {
  return std::any_of(rs.begin(), rs.end(), [&](const Requirement& r) {
    return std::any_of(props.begin(), props.end(), [&](Property p) { return r.uses(p); });
  });
}

std::string host_values(const Requirement& r, const RequirementFacts& facts, const Gpu* gpu) {
  std::vector<std::string> parts;
  const auto add = [&](Property p, const std::optional<std::string>& v) {
    if (r.uses(p)) parts.push_back(std::string(property_name(p)) + " " + v.value_or("unknown"));
  };
  add(Property::kCuda, facts.cuda);
  add(Property::kDriver, facts.driver);
  add(Property::kArch, facts.arch);
  add(Property::kBrand, facts.brand);
  std::string out =
      gpu != nullptr ? "GPU " + std::to_string(gpu->index) + " has " : "this host has ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : ", ") + parts[i];
  return out;
}

Status check_all(const std::vector<Requirement>& rs, const RequirementFacts& facts,
                 const Gpu* gpu) {
  for (const auto& r : rs) {
    if (const auto unmet = unmet_alternative(r, facts)) {
      return Error{"requirement not met: " + *unmet + " (" + r.variable + "; " +
                   host_values(r, facts, gpu) + ")"};
    }
  }
  return {};
}

}  // namespace

Status check_requirements(const std::vector<Requirement>& requirements,
                          const std::vector<Gpu>& selected, const std::string& driver_version,
                          DriverProbe& probe) {
  if (requirements.empty()) return {};
  const bool need_cuda = any_uses(requirements, {Property::kCuda});
  const bool need_nvml =
      !selected.empty() && any_uses(requirements, {Property::kArch, Property::kBrand});
  ProbeAnswers answers;
  if (need_cuda || need_nvml) {
    auto asked = probe.query(need_cuda, need_nvml);
    if (!asked) return asked.error();
    answers = std::move(*asked);
  }
  RequirementFacts facts{answers.cuda, driver_version, std::nullopt, std::nullopt};
  if (selected.empty()) return check_all(requirements, facts, nullptr);
  for (const auto& gpu : selected) {
    const auto it = answers.gpus.find(gpu.uuid);
    RequirementFacts per_gpu = facts;
    if (it != answers.gpus.end()) {
      per_gpu.arch = it->second.arch;
      per_gpu.brand = it->second.brand;
    }
    if (auto s = check_all(requirements, per_gpu, &gpu); !s) return s;
  }
  return {};
}

}  // namespace gcr
