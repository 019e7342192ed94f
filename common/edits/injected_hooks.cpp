#include "edits/injected_hooks.h"

#include <algorithm>

#include "base/child_process.h"
#include "base/text.h"
#include "compat/nvidia_cli.h"

namespace gcr {
namespace {

Hook ctk_hook(const Config::Hooks& hooks, std::vector<std::string> args) {
  args.insert(args.begin(), {"gpu-ctk", "hook"});
  return Hook{"createContainer", hooks.ctk_path, std::move(args), minimal_environment(),
              kHookTimeoutSeconds};
}

// A hook kind runc does not know is not checked by view_spec: its entries may be anything.
bool is_legacy_nvidia_hook(const Json& hook) {
  const Json path = hook.is_object() ? hook.value("path", Json()) : Json();
  if (!path.is_string()) return false;
  const std::string name = basename_of(path.get<std::string>());
  return name == "nvidia-container-runtime-hook" || name == "nvidia-container-toolkit";
}

bool is_ctr_gpus_hook_entry(const Json& hook) {
  const auto args = hook.find("args");
  if (args == hook.end() || !args->is_array()) return false;
  std::vector<std::string> argv;
  for (const auto& a : *args) {
    if (!a.is_string()) return false;
    argv.push_back(a.get<std::string>());
  }
  return is_ctr_gpus_hook(argv);
}

bool is_our_hook(const Json& hook, const Config::Hooks& hooks) {
  if (!hook.is_object() || hook.value("path", Json()) != hooks.ctk_path) return false;
  const auto args = hook.find("args");
  return args != hook.end() && args->is_array() && args->size() >= 2 && (*args)[1] == "hook";
}

// Our gpu-ctk running hook `name`, with no flags.
bool is_argless_ctk_hook(const Json& hook, const Config::Hooks& hooks, const char* name) {
  if (!hook.is_object() || hook.value("path", Json()) != hooks.ctk_path) return false;
  const auto args = hook.find("args");
  return args != hook.end() && *args == Json::array({"gpu-ctk", "hook", name});
}

}  // namespace

Hook update_libraries_hook(const Config::Hooks& hooks, const std::vector<std::string>& folders,
                           const std::vector<std::string>& links) {
  std::vector<std::string> args{"update-libraries", "--ldconfig-path", hooks.ldconfig};
  for (const auto& folder : folders) args.insert(args.end(), {"--folder", folder});
  for (const auto& link : links) args.insert(args.end(), {"--link", link});
  return ctk_hook(hooks, std::move(args));
}

Hook enable_cuda_compat_hook(const Config::Hooks& hooks, const std::string& host_driver_version,
                             const std::string& dir) {
  return ctk_hook(hooks, {"enable-cuda-compat", "--host-driver-version", host_driver_version,
                          "--cuda-compat-container-root", dir});
}

Hook disable_device_node_modification_hook(const Config::Hooks& hooks) {
  return ctk_hook(hooks, {"disable-device-node-modification"});
}

Hook update_application_profile_hook(const Config::Hooks& hooks) {
  return ctk_hook(hooks, {"update-application-profile"});
}

bool is_device_node_modification_hook(const Json& hook, const Config::Hooks& hooks) {
  return is_argless_ctk_hook(hook, hooks, "disable-device-node-modification");
}

bool is_application_profile_hook(const Json& hook, const Config::Hooks& hooks) {
  return is_argless_ctk_hook(hook, hooks, "update-application-profile");
}

std::optional<CudaCompatRequest> read_enable_cuda_compat_hook(const Json& hook,
                                                              const Config::Hooks& hooks) {
  if (!hook.is_object() || hook.value("path", Json()) != hooks.ctk_path) return std::nullopt;
  const auto args = hook.find("args");
  if (args == hook.end() || !args->is_array() || args->size() != 7 ||
      !std::all_of(args->begin(), args->end(), [](const Json& a) { return a.is_string(); }))
    return std::nullopt;
  const Json& a = *args;
  if (a[0] != "gpu-ctk" || a[1] != "hook" || a[2] != "enable-cuda-compat" ||
      a[3] != "--host-driver-version" || a[5] != "--cuda-compat-container-root")
    return std::nullopt;
  return CudaCompatRequest{a[4].get<std::string>(), a[6].get<std::string>()};
}

std::optional<LibrariesRequest> read_update_libraries_hook(const Json& hook,
                                                           const Config::Hooks& hooks) {
  if (!hook.is_object()) return std::nullopt;
  const auto path = hook.find("path");
  if (path == hook.end() || !path->is_string() || *path != hooks.ctk_path) return std::nullopt;
  const auto args = hook.find("args");
  if (args == hook.end() || !args->is_array() || args->size() < 3 || (*args)[0] != "gpu-ctk" ||
      (*args)[1] != "hook" || (*args)[2] != "update-libraries")
    return std::nullopt;
  LibrariesRequest out;
  for (std::size_t i = 3; i < args->size(); i += 2) {
    if (i + 1 >= args->size() || !(*args)[i].is_string() || !(*args)[i + 1].is_string())
      return std::nullopt;
    const std::string flag = (*args)[i].get<std::string>();
    std::string value = (*args)[i + 1].get<std::string>();
    if (flag == "--ldconfig-path" && out.ldconfig.empty()) {
      out.ldconfig = std::move(value);
    } else if (flag == "--folder") {
      out.folders.push_back(std::move(value));
    } else if (flag == "--link") {
      out.links.push_back(std::move(value));
    } else {
      return std::nullopt;
    }
  }
  if (out.ldconfig.empty()) return std::nullopt;
  return out;
}

void remove_superseded_hooks(Json& spec, const Config::Hooks& hooks) {
  const auto all = spec.find("hooks");
  if (all == spec.end() || !all->is_object()) return;
  for (auto& [kind, list] : all->items()) {
    if (!list.is_array()) continue;
    const bool prestart = kind == "prestart";
    const bool create_runtime = kind == "createRuntime";
    list.erase(
        std::remove_if(list.begin(), list.end(),
                       [&](const Json& h) {
                         return (prestart && is_legacy_nvidia_hook(h)) ||
                                ((prestart || create_runtime) && is_ctr_gpus_hook_entry(h)) ||
                                is_our_hook(h, hooks);
                       }),
        list.end());
  }
}

void erase_created_container_hook(Json& spec, std::size_t index) {
  Json& list = spec["hooks"]["createContainer"];
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(index));
  if (list.empty()) spec["hooks"].erase("createContainer");
  if (spec["hooks"].empty()) spec.erase("hooks");
}

}  // namespace gcr
