#include "cdi/spec.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string_view>

#include "base/text.h"
#include "edits/edits_json.h"
#include "edits/validate.h"
#include "json/fields.h"
#include "vocabulary/cdi_name.h"

namespace gcr {
namespace {

// Known versions, oldest first; 0.3.0 is the oldest a spec may declare.
const std::vector<std::string> kVersions = {"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0",
                                            "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
constexpr std::size_t kOldestUsable = 2;  // index of 0.3.0

std::size_t version_index(std::string version) {
  if (!version.empty() && version.front() == 'v') version.erase(0, 1);
  const auto it = std::find(kVersions.begin(), kVersions.end(), version);
  return it == kVersions.end() ? kVersions.size()
                               : static_cast<std::size_t>(it - kVersions.begin());
}

std::size_t required_index(const ContainerEdits& e) {
  std::size_t need = kOldestUsable;
  const auto bump = [&](const char* v) { need = std::max(need, version_index(v)); };
  for (const auto& m : e.mounts) {
    if (!m.type.empty()) bump("0.4.0");
  }
  for (const auto& n : e.device_nodes) {
    if (!n.host_path.empty()) bump("0.5.0");
  }
  if (e.intel_rdt) bump("0.7.0");
  if (!e.additional_gids.empty()) bump("0.7.0");
  if (e.intel_rdt &&
      (e.intel_rdt->contains("schemata") || e.intel_rdt->value("enableMonitoring", false)))
    bump("1.1.0");
  if (!e.net_devices.empty()) bump("1.1.0");
  return need;
}

std::size_t required_index(const CdiSpec& spec) {
  std::size_t need = required_index(spec.edits);
  const auto bump = [&](const char* v) { need = std::max(need, version_index(v)); };
  if (!spec.annotations.empty()) bump("0.6.0");
  const auto slash = spec.kind.find('/');
  if (slash != std::string::npos && spec.kind.find('.', slash) != std::string::npos) bump("0.6.0");
  for (const auto& d : spec.devices) {
    need = std::max(need, required_index(d.edits));
    if (!d.name.empty() && d.name.front() >= '0' && d.name.front() <= '9') bump("0.5.0");
    if (!d.annotations.empty()) bump("0.6.0");
  }
  return need;
}

Result<CdiDevice> device_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(j, {"name", "annotations", "containerEdits"}, where));
  if (r.error()) return *r.error();
  CdiDevice d;
  d.name = r.take(string_field(j, "name", where, true));
  d.annotations = r.take(string_map(j, "annotations", where));
  const Json* edits = member(j, "containerEdits");
  if (edits == nullptr)
    r.check(field_error(at(where, "containerEdits"), "is required"));
  else
    d.edits = r.take(edits_from_json(*edits, at(where, "containerEdits")));
  if (r.error()) return *r.error();
  return d;
}

// The keys whose values are strings, and lists of strings, in the CDI structure.
const std::set<std::string_view> kStringKeys = {
    "cdiVersion", "kind",          "name",          "path",     "hostPath",
    "type",       "permissions",   "containerPath", "hookName", "hostInterfaceName",
    "closID",     "l3CacheSchema", "memBwSchema"};
const std::set<std::string_view> kStringListKeys = {"env", "options", "args", "schemata"};

void integer_or_bool_to_text(Json& v) {
  if (v.is_boolean()) {
    v = v.get<bool>() ? "true" : "false";
  } else if (v.is_number_integer()) {
    v = v.dump();
  }
}

// As the CDI library's reader (sigs.k8s.io/yaml, which reads JSON files too) types a scalar by
// the field it fills: an integer or a boolean where the structure has a string is its text, so
// `name: 0` is the device "0". Depth is bounded by the parser's.
void integers_and_bools_to_text_in_string_fields(Json& node) {
  if (node.is_array()) {
    for (auto& item : node) integers_and_bools_to_text_in_string_fields(item);
    return;
  }
  if (!node.is_object()) return;
  for (auto item : node.items()) {
    Json& value = item.value();
    const std::string& key = item.key();
    if (kStringKeys.count(key) != 0) {
      integer_or_bool_to_text(value);
    } else if (kStringListKeys.count(key) != 0 && value.is_array()) {
      for (auto& e : value) integer_or_bool_to_text(e);
    } else if (key == "annotations" && value.is_object()) {
      for (auto& e : value) integer_or_bool_to_text(e);
    } else {
      integers_and_bools_to_text_in_string_fields(value);
    }
  }
}

}  // namespace

Result<CdiSpec> cdi_spec_from_json(Json doc) {
  integers_and_bools_to_text_in_string_fields(doc);
  Reader r;
  r.check(only_keys(doc, {"cdiVersion", "kind", "annotations", "devices", "containerEdits"}, ""));
  if (r.error()) return *r.error();
  CdiSpec spec;
  spec.version = r.take(string_field(doc, "cdiVersion", "", true));
  spec.kind = r.take(string_field(doc, "kind", "", true));
  spec.annotations = r.take(string_map(doc, "annotations", ""));
  if (const Json* edits = member(doc, "containerEdits"))
    spec.edits = r.take(edits_from_json(*edits, "containerEdits"));
  spec.devices = r.take(list_of<CdiDevice>(doc, "devices", "", device_from));
  if (r.error()) return *r.error();
  return spec;
}

Status validate_cdi_spec(const CdiSpec& spec) {
  const std::size_t declared = version_index(spec.version);
  if (declared == kVersions.size())
    return Error{"invalid version `" + printable(spec.version) + "`"};
  const std::size_t needed = required_index(spec);
  if (declared < needed) return Error{"the spec version must be at least v" + kVersions[needed]};
  const auto slash = spec.kind.find('/');
  if (slash == std::string::npos || !is_valid_vendor(spec.kind.substr(0, slash))) {
    return Error{"invalid vendor in kind `" + printable(spec.kind) + "`"};
  }
  if (!is_valid_class(spec.kind.substr(slash + 1)))
    return Error{"invalid class in kind `" + printable(spec.kind) + "`"};
  if (spec.devices.empty()) return Error{"invalid spec, no devices"};
  if (auto s = validate_edits(spec.edits, "containerEdits"); !s) return s;
  std::set<std::string> names;
  for (const auto& d : spec.devices) {
    if (!is_valid_device_name(d.name))
      return Error{"invalid device name `" + printable(d.name) + "`"};
    if (!names.insert(d.name).second) return Error{"duplicate device name `" + d.name + "`"};
    if (d.edits.empty()) return Error{"invalid device `" + d.name + "`, empty device edits"};
    if (auto s = validate_edits(d.edits, "devices[" + d.name + "].containerEdits"); !s) return s;
  }
  return {};
}

std::string minimum_cdi_version(const CdiSpec& spec) {
  return kVersions[required_index(spec)];
}

void raise_cdi_version(CdiSpec& spec) {
  const std::size_t declared = version_index(spec.version);
  const std::size_t needed = required_index(spec);
  if (declared < needed) spec.version = kVersions[needed];
}

Json cdi_spec_to_json(const CdiSpec& spec) {
  Json out = {{"cdiVersion", spec.version}, {"kind", spec.kind}};
  if (!spec.annotations.empty()) out["annotations"] = spec.annotations;
  Json devices = Json::array();
  for (const auto& d : spec.devices) {
    Json j = {{"name", d.name}};
    if (!d.annotations.empty()) j["annotations"] = d.annotations;
    j["containerEdits"] = edits_to_json(d.edits);
    devices.push_back(std::move(j));
  }
  out["devices"] = devices;
  if (!spec.edits.empty()) out["containerEdits"] = edits_to_json(spec.edits);
  return out;
}

}  // namespace gcr
