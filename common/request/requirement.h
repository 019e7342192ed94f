// The NVIDIA_REQUIRE_* language: spaces separate alternatives (OR), commas separate terms of
// one alternative (AND); a term is <cuda|driver|arch|brand><op><value> with op one of
// = != < <= > >=. All variables must hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace gcr {

enum class Property { kCuda, kDriver, kArch, kBrand };

struct Term {
  Property property;
  std::string op;  // "=", "!=", "<", "<=", ">", ">="
  std::string value;
};

struct Requirement {
  std::string variable;  // NVIDIA_REQUIRE_CUDA, or CUDA_VERSION for the legacy rule
  std::string text;
  std::vector<std::vector<Term>> alternatives;

  [[nodiscard]] bool uses(Property p) const;
};

// Parses one variable's value. Invalid terms are errors naming the variable and the term.
[[nodiscard]] Result<Requirement> parse_requirement(const std::string& variable,
                                                    const std::string& text);

// What the host says; an unknown value makes every term about it true, as in libnvidia-container.
struct RequirementFacts {
  std::optional<std::string> cuda;    // "12.4"
  std::optional<std::string> driver;  // "550.54.15"
  std::optional<std::string> arch;    // "8.0" (of one GPU)
  std::optional<std::string> brand;   // "Tesla" (of one GPU)
};

// nullopt when some alternative holds; otherwise the first alternative's text.
[[nodiscard]] std::optional<std::string> unmet_alternative(const Requirement& r,
                                                           const RequirementFacts& facts);

[[nodiscard]] const char* property_name(Property p);

}  // namespace gcr
