#include "request/requirements_check.h"

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
  if (gpu != nullptr) {  // GPU facts are only ever asked per GPU
    add(Property::kArch, facts.arch);
    add(Property::kBrand, facts.brand);
  }
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

// True when an alternative without arch/brand terms holds: no GPU needs to be asked.
bool holds_without_gpu_facts(const Requirement& r, const RequirementFacts& facts) {
  Requirement plain = r;
  std::erase_if(plain.alternatives, [](const std::vector<Term>& alternative) {
    return std::any_of(alternative.begin(), alternative.end(), [](const Term& t) {
      return t.property == Property::kArch || t.property == Property::kBrand;
    });
  });
  return !plain.alternatives.empty() && !unmet_alternative(plain, facts);
}

}  // namespace

Status check_requirements(const std::vector<Requirement>& requirements,
                          const std::vector<Gpu>& selected,
                          const std::optional<std::string>& driver_version, DriverProbe& probe) {
  if (requirements.empty()) return {};
  RequirementFacts facts{std::nullopt, driver_version, std::nullopt, std::nullopt};
  if (driver_version && any_uses(requirements, {Property::kCuda})) {
    auto cuda = probe.cuda_version(*driver_version);
    if (!cuda) return cuda.error();
    facts.cuda = *cuda;
  }
  // First without GPU facts (unknown counts as met): NVML is asked only when the answer
  // depends on a GPU's architecture or brand.
  bool needs_gpu_facts = false;
  for (const auto& r : requirements) {
    if (holds_without_gpu_facts(r, facts)) continue;
    if (auto s = check_all({r}, facts, nullptr); !s) return s;
    needs_gpu_facts = true;
  }
  if (!needs_gpu_facts || selected.empty()) return {};
  auto gpu_facts = probe.gpu_facts();
  if (!gpu_facts) return gpu_facts.error();
  for (const auto& gpu : selected) {
    RequirementFacts per_gpu = facts;
    if (const auto it = gpu_facts->find(gpu.uuid); it != gpu_facts->end()) {
      per_gpu.arch = it->second.arch;
      per_gpu.brand = it->second.brand;
    }
    if (auto s = check_all(requirements, per_gpu, &gpu); !s) return s;
  }
  return {};
}

}  // namespace gcr
