#include "json/fields.h"

#include <algorithm>

namespace gcr {

Error field_error(const std::string& where, const std::string& what) {
  return Error{"`" + where + "` " + what};
}

Status only_keys(const Json& obj, Keys known, const std::string& where) {
  if (!obj.is_object()) return field_error(where, "must be an object");
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      return Error{"unknown field `" + (where.empty() ? key : where + "." + key) + "`"};
    }
  }
  return {};
}

const Json* member(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string at(const std::string& where, const char* key) {
  return where.empty() ? key : where + "." + key;
}

Result<std::string> string_field(const Json& obj, const char* key, const std::string& where,
                                 bool required) {
  const Json* v = member(obj, key);
  if (v == nullptr)
    return required ? Result<std::string>(field_error(at(where, key), "is required"))
                    : std::string();
  if (!v->is_string()) return field_error(at(where, key), "must be a string");
  return v->get<std::string>();
}

Result<std::vector<std::string>> string_list(const Json& obj, const char* key,
                                             const std::string& where) {
  const Json* v = member(obj, key);
  if (v == nullptr) return std::vector<std::string>();
  if (!v->is_array() ||
      !std::all_of(v->begin(), v->end(), [](const Json& e) { return e.is_string(); })) {
    return field_error(at(where, key), "must be a list of strings");
  }
  return v->get<std::vector<std::string>>();
}

Result<std::map<std::string, std::string>> string_map(const Json& obj, const char* key,
                                                      const std::string& where) {
  const Json* v = member(obj, key);
  std::map<std::string, std::string> out;
  if (v == nullptr) return out;
  if (!v->is_object()) return field_error(at(where, key), "must be a map of strings");
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) return field_error(at(where, key) + "." + k, "must be a string");
    out[k] = value.get<std::string>();
  }
  return out;
}

Result<std::optional<std::int64_t>> int_field(const Json& obj, const char* key,
                                              const std::string& where, std::int64_t lo,
                                              std::int64_t hi) {
  const Json* v = member(obj, key);
  if (v == nullptr) return std::optional<std::int64_t>();
  const bool fits =
      v->is_number_unsigned()
          ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
          : v->is_number_integer() && v->get<std::int64_t>() >= lo && v->get<std::int64_t>() <= hi;
  if (!fits)
    return field_error(at(where, key), "must be an integer from " + std::to_string(lo) + " to " +
                                           std::to_string(hi));
  return std::optional<std::int64_t>(v->get<std::int64_t>());
}

}  // namespace gcr
