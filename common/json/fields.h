// Reading typed fields of a JSON object strictly: unknown keys, wrong types and values out of
// range are errors that name the field by its dotted path ("containerEdits.mounts[0].type").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

using Keys = std::initializer_list<const char*>;

// "`where` what"
[[nodiscard]] Error field_error(const std::string& where, const std::string& what);
// Every key of `obj` (an object) is one of `known`.
[[nodiscard]] Status only_keys(const Json& obj, Keys known, const std::string& where);
// obj[key] when present and not null.
[[nodiscard]] const Json* member(const Json& obj, const char* key);
// "where.key" (or "key" at the top level).
[[nodiscard]] std::string at(const std::string& where, const char* key);

[[nodiscard]] Result<std::string> string_field(const Json& obj, const char* key,
                                               const std::string& where, bool required);
[[nodiscard]] Result<std::vector<std::string>> string_list(const Json& obj, const char* key,
                                                           const std::string& where);
[[nodiscard]] Result<std::map<std::string, std::string>> string_map(const Json& obj,
                                                                    const char* key,
                                                                    const std::string& where);
// An integer in [lo, hi].
[[nodiscard]] Result<std::optional<std::int64_t>> int_field(const Json& obj, const char* key,
                                                            const std::string& where,
                                                            std::int64_t lo, std::int64_t hi);

template <class T>
std::optional<T> narrow(const std::optional<std::int64_t>& v) {
  return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
}

// Collects the first error of a sequence of field reads.
class Reader {
 public:
  template <class T>
  T take(Result<T> r) {
    if (!r) {
      if (!error_) error_ = r.error();
      return T{};
    }
    return std::move(r).value();
  }
  void check(const Status& s) {
    if (!s && !error_) error_ = s.error();
  }
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  std::optional<Error> error_;
};

// obj[key] as a list, each element read by `parse(element, "where.key[i]")`.
template <class T, class Fn>
Result<std::vector<T>> list_of(const Json& obj, const char* key, const std::string& where,
                               Fn parse) {
  std::vector<T> out;
  const Json* v = member(obj, key);
  if (v == nullptr) return out;
  if (!v->is_array()) return field_error(at(where, key), "must be a list");
  for (std::size_t i = 0; i < v->size(); ++i) {
    auto item = parse((*v)[i], at(where, key) + "[" + std::to_string(i) + "]");
    if (!item) return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

}  // namespace gcr
