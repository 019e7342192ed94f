#include "oci/spec_view.h"

#include <algorithm>
#include <initializer_list>

#include "base/text.h"
#include "oci/go_fold.h"

namespace gcr {
namespace {

using Keys = std::initializer_list<const char*>;

const Keys kTopKeys = {"ociVersion", "process", "root",        "hostname", "domainname",
                       "mounts",     "hooks",   "annotations", "linux",    "solaris",
                       "windows",    "vm",      "zos"};
const Keys kProcessKeys = {"terminal",
                           "consoleSize",
                           "user",
                           "args",
                           "commandLine",
                           "env",
                           "cwd",
                           "capabilities",
                           "rlimits",
                           "noNewPrivileges",
                           "apparmorProfile",
                           "oomScoreAdj",
                           "selinuxLabel",
                           "ioPriority",
                           "scheduler",
                           "execCPUAffinity"};
const Keys kCapabilityKeys = {"bounding", "effective", "inheritable", "permitted", "ambient"};
const Keys kUserKeys = {"uid", "gid", "umask", "additionalGids", "username"};
const Keys kMountKeys = {"destination", "source", "type", "options", "uidMappings", "gidMappings"};
const Keys kHookKinds = {"prestart",       "createRuntime", "createContainer",
                         "startContainer", "poststart",     "poststop"};
const Keys kHookKeys = {"path", "args", "env", "timeout"};
const Keys kLinuxKeys = {"devices",    "netDevices", "uidMappings",  "gidMappings",
                         "sysctl",     "resources",  "cgroupsPath",  "rootfsPropagation",
                         "seccomp",    "namespaces", "maskedPaths",  "readonlyPaths",
                         "mountLabel", "intelRdt",   "memoryPolicy", "personality",
                         "timeOffsets"};
const Keys kResourcesKeys = {"devices",        "memory",  "cpu",  "pids",   "blockIO",
                             "hugepageLimits", "network", "rdma", "unified"};

Error shape_error(const std::string& where, const std::string& what) {
  return Error{"invalid spec: `" + where + "` " + what};
}

// Go's encoding/json matches struct fields without regard to case (Unicode simple folding:
// `capabilitieſ` is `capabilities`) and merges what it finds, so such a key next to the exact
// one would reach runc without us seeing it: refuse it.
Status check_key_case(const Json& object, const Keys& known, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    for (const char* k : known) {
      if (key != k && go_field_matches(key, k)) {
        return shape_error(printable(where.empty() ? key : where + "." + key, 128),
                           "differs from `" + std::string(k) + "` only in case");
      }
    }
  }
  return {};
}

bool is_string_list(const Json& v) {
  return v.is_array() &&
         std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_string(); });
}

// member(obj, key) when present must satisfy `ok`.
template <class Pred>
Status check_member(const Json& obj, const char* key, const std::string& where, const char* what,
                    Pred ok) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!ok(*it)) return shape_error(where + key, what);
  return {};
}

Status check_object_list(const Json& list, const Keys& keys, const char* required,
                         const std::string& where) {
  if (!list.is_array()) return shape_error(where, "must be a list");
  for (const auto& e : list) {
    if (!e.is_object()) return shape_error(where, "must be a list of objects");
    if (auto s = check_key_case(e, keys, where); !s) return s;
    const auto r = e.find(required);
    if (r == e.end() || !r->is_string())
      return shape_error(where, std::string("entries need a string `") + required + "`");
  }
  return {};
}

Status read_env(const Json& process, SpecView& view) {
  const auto it = process.find("env");
  if (it == process.end() || it->is_null()) return {};
  if (!is_string_list(*it)) return shape_error("process.env", "must be a list of strings");
  for (const auto& e : *it) {
    const auto& entry = e.get_ref<const std::string&>();
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return shape_error("process.env", "entry `" + printable(entry, 64) + "` is not NAME=value");
    }
    view.env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return {};
}

Status read_capabilities(const Json& process, SpecView& view) {
  const auto it = process.find("capabilities");
  if (it == process.end() || it->is_null()) return {};
  if (!it->is_object()) return shape_error("process.capabilities", "must be an object");
  if (auto s = check_key_case(*it, kCapabilityKeys, "process.capabilities"); !s) return s;
  for (const char* set : kCapabilityKeys) {
    if (auto s = check_member(*it, set, "process.capabilities.", "must be a list of strings",
                              is_string_list);
        !s)
      return s;
  }
  const auto bounding = it->find("bounding");
  view.privileged =
      bounding != it->end() && bounding->is_array() &&
      std::find(bounding->begin(), bounding->end(), Json("CAP_SYS_ADMIN")) != bounding->end();
  return {};
}

Status read_process(const Json& spec, SpecView& view) {
  const auto it = spec.find("process");
  if (it == spec.end() || it->is_null()) return {};
  if (!it->is_object()) return shape_error("process", "must be an object");
  if (auto s = check_key_case(*it, kProcessKeys, "process"); !s) return s;
  if (auto s = read_env(*it, view); !s) return s;
  if (auto s = read_capabilities(*it, view); !s) return s;
  const auto user = it->find("user");
  if (user == it->end() || user->is_null()) return {};
  if (!user->is_object()) return shape_error("process.user", "must be an object");
  if (auto s = check_key_case(*user, kUserKeys, "process.user"); !s) return s;
  return check_member(
      *user, "additionalGids", "process.user.", "must be a list of numbers", [](const Json& v) {
        return v.is_array() && std::all_of(v.begin(), v.end(),
                                           [](const Json& e) { return e.is_number_unsigned(); });
      });
}

Status read_mounts(const Json& spec, SpecView& view) {
  const auto it = spec.find("mounts");
  if (it == spec.end() || it->is_null()) return {};
  if (auto s = check_object_list(*it, kMountKeys, "destination", "mounts"); !s) return s;
  for (const auto& m : *it) {
    const auto source = m.find("source");
    if (source != m.end() && !source->is_string())
      return shape_error("mounts", "`source` must be a string");
    view.mounts.push_back(SpecMount{source == m.end() ? "" : source->get<std::string>(),
                                    m.at("destination").get<std::string>()});
  }
  return {};
}

Status read_annotations(const Json& spec, SpecView& view) {
  const auto it = spec.find("annotations");
  if (it == spec.end() || it->is_null()) return {};
  if (!it->is_object()) return shape_error("annotations", "must be an object");
  view.annotations.reserve(it->size());
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) return shape_error("annotations." + key, "must be a string");
    view.annotations.emplace_back(key, value.get_ref<const std::string&>());
  }
  return {};
}

Status read_hooks(const Json& spec, SpecView& view) {
  const auto it = spec.find("hooks");
  if (it == spec.end() || it->is_null()) return {};
  if (!it->is_object()) return shape_error("hooks", "must be an object");
  if (auto s = check_key_case(*it, kHookKinds, "hooks"); !s) return s;
  for (const char* kind : kHookKinds) {
    const auto list = it->find(kind);
    if (list == it->end() || list->is_null()) continue;
    const std::string where = std::string("hooks.") + kind;
    if (auto s = check_object_list(*list, kHookKeys, "path", where); !s) return s;
    for (const auto& hook : *list) {
      if (auto s =
              check_member(hook, "args", where + ".", "must be a list of strings", is_string_list);
          !s)
        return s;
    }
  }
  for (const char* kind : {"prestart", "createRuntime"}) {
    const auto list = it->find(kind);
    if (list == it->end() || list->is_null()) continue;
    for (const auto& hook : *list) {
      SpecHook h{hook.at("path").get<std::string>(), {}};
      const auto args = hook.find("args");
      if (args != hook.end() && !args->is_null()) h.args = args->get<std::vector<std::string>>();
      view.runtime_hooks.push_back(std::move(h));
    }
  }
  return {};
}

Status check_linux(const Json& spec) {
  const auto it = spec.find("linux");
  if (it == spec.end() || it->is_null()) return {};
  if (!it->is_object()) return shape_error("linux", "must be an object");
  if (auto s = check_key_case(*it, kLinuxKeys, "linux"); !s) return s;
  const auto devices = it->find("devices");
  if (devices != it->end() && !devices->is_null()) {
    if (auto s = check_object_list(*devices,
                                   {"path", "type", "major", "minor", "fileMode", "uid", "gid"},
                                   "path", "linux.devices");
        !s)
      return s;
  }
  const auto resources = it->find("resources");
  if (resources == it->end() || resources->is_null()) return {};
  if (!resources->is_object()) return shape_error("linux.resources", "must be an object");
  if (auto s = check_key_case(*resources, kResourcesKeys, "linux.resources"); !s) return s;
  return check_member(
      *resources, "devices", "linux.resources.", "must be a list of objects", [](const Json& v) {
        return v.is_array() &&
               std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_object(); });
      });
}

Status read_root(const Json& spec, SpecView& view) {
  const auto it = spec.find("root");
  if (it == spec.end() || it->is_null()) return {};
  if (!it->is_object()) return shape_error("root", "must be an object");
  if (auto s = check_key_case(*it, {"path", "readonly"}, "root"); !s) return s;
  return check_member(*it, "path", "root.", "must be a string", [&](const Json& v) {
    if (v.is_string()) view.root_path = v.get<std::string>();
    return v.is_string();
  });
}

}  // namespace

Result<SpecView> view_spec(const Json& spec) {
  SpecView view;
  for (auto check : {check_key_case(spec, kTopKeys, ""), read_process(spec, view),
                     read_mounts(spec, view), read_annotations(spec, view), read_hooks(spec, view),
                     check_linux(spec), read_root(spec, view)}) {
    if (!check) return check.error();
  }
  return view;
}

}  // namespace gcr
