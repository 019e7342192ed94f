#include "request/requirement.h"

#include <algorithm>

#include "base/text.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxRequirementBytes = 4096;

std::optional<Property> property_from(std::string_view name) {
  for (Property p : {Property::kCuda, Property::kDriver, Property::kArch, Property::kBrand}) {
    if (iequals(name, property_name(p))) return p;
  }
  return std::nullopt;
}

bool is_op_char(char c) {
  return c == '<' || c == '>' || c == '=' || c == '!';
}

bool is_dotted_number(std::string_view s) {
  if (s.empty()) return false;
  for (auto part : split(s, '.')) {
    if (part.empty() || !parse_decimal(part)) return false;
  }
  return true;
}

Result<Term> parse_term(std::string_view text) {
  const auto op_begin = std::find_if(text.begin(), text.end(), is_op_char);
  const auto op_end = std::find_if_not(op_begin, text.end(), is_op_char);
  const std::string_view name(text.begin(), op_begin);
  const std::string op(op_begin, op_end);
  const std::string value(op_end, text.end());
  const auto property = property_from(name);
  if (!property) return Error{"unknown property in `" + printable(text) + "`"};
  static const char* kOps[] = {"=", "!=", "<", "<=", ">", ">="};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; })) {
    return Error{"bad operator in `" + printable(text) + "`"};
  }
  if (value.empty()) return Error{"no value in `" + printable(text) + "`"};
  if (*property == Property::kBrand && op != "=" && op != "!=") {
    return Error{"brand only compares with = or != in `" + printable(text) + "`"};
  }
  if (*property != Property::kBrand && !is_dotted_number(value)) {
    return Error{quote(value) + " is not a version in " + quote(text)};
  }
  return Term{*property, op, value};
}

// -1, 0, 1 comparing dotted numbers component-wise; missing components are zero.
int compare_versions(std::string_view a, std::string_view b) {
  const auto pa = split(a, '.');
  const auto pb = split(b, '.');
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    const auto x = i < pa.size() ? parse_decimal(pa[i]).value_or(0) : 0;
    const auto y = i < pb.size() ? parse_decimal(pb[i]).value_or(0) : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool holds(const Term& term, const RequirementFacts& facts) {
  const std::optional<std::string>* fact = nullptr;
  switch (term.property) {
    case Property::kCuda:
      fact = &facts.cuda;
      break;
    case Property::kDriver:
      fact = &facts.driver;
      break;
    case Property::kArch:
      fact = &facts.arch;
      break;
    case Property::kBrand:
      fact = &facts.brand;
      break;
  }
  if (!fact->has_value()) return true;
  if (term.property == Property::kBrand) {
    const bool same = iequals(**fact, term.value);
    return term.op == "=" ? same : !same;
  }
  if (!is_dotted_number(**fact)) return true;
  const int c = compare_versions(**fact, term.value);
  if (term.op == "=") return c == 0;
  if (term.op == "!=") return c != 0;
  if (term.op == "<") return c < 0;
  if (term.op == "<=") return c <= 0;
  if (term.op == ">") return c > 0;
  return c >= 0;
}

}  // namespace

const char* property_name(Property p) {
  switch (p) {
    case Property::kCuda:
      return "cuda";
    case Property::kDriver:
      return "driver";
    case Property::kArch:
      return "arch";
    case Property::kBrand:
      return "brand";
  }
  return "";
}

bool Requirement::uses(Property p) const {
  for (const auto& alternative : alternatives) {
    for (const auto& term : alternative) {
      if (term.property == p) return true;
    }
  }
  return false;
}

Result<Requirement> parse_requirement(const std::string& variable, const std::string& text) {
  const auto fail = [&](const std::string& why) {
    return Error{"invalid requirement " + variable + ": " + why};
  };
  if (text.size() > kMaxRequirementBytes) return fail("longer than 4096 bytes");
  Requirement r{variable, text, {}};
  for (auto group : split(text, ' ')) {
    std::vector<Term> terms;
    for (auto raw : split(group, ',')) {
      const auto item = trim(raw);
      if (item.empty()) continue;
      auto term = parse_term(item);
      if (!term) return fail(term.error().message);
      terms.push_back(*term);
    }
    if (!terms.empty()) r.alternatives.push_back(std::move(terms));
  }
  return r;
}

std::optional<std::string> unmet_alternative(const Requirement& r, const RequirementFacts& facts) {
  if (r.alternatives.empty()) return std::nullopt;
  for (const auto& alternative : r.alternatives) {
    if (std::all_of(alternative.begin(), alternative.end(),
                    [&](const Term& t) { return holds(t, facts); })) {
      return std::nullopt;
    }
  }
  return std::string(trim(split(trim(r.text), ' ').front()));
}

}  // namespace gcr
