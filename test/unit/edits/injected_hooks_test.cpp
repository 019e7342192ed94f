// The update-libraries hook as the shim writes it, and read back from a spec.
#include <doctest/doctest.h>

#include "edits/injected_hooks.h"

using gcr::Json;

namespace {

Json as_spec_hook(const gcr::Hook& hook) {
  return Json{{"path", hook.path}, {"args", hook.args}, {"env", hook.env}};
}

gcr::Config::Hooks our_hooks() {
  gcr::Config::Hooks hooks;
  hooks.ctk_path = "/usr/bin/gpu-ctk";
  hooks.ldconfig = "@/sbin/ldconfig.real";
  return hooks;
}

}  // namespace

TEST_CASE("an update-libraries hook reads back as written") {
  const auto hooks = our_hooks();
  const Json hook = as_spec_hook(
      gcr::update_libraries_hook(hooks, {"/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu"},
                                 {"libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so"}));
  const auto read = gcr::read_update_libraries_hook(hook, hooks);
  REQUIRE(read);
  CHECK(read->ldconfig == "@/sbin/ldconfig.real");
  CHECK(read->folders ==
        std::vector<std::string>{"/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu"});
  CHECK(read->links ==
        std::vector<std::string>{"libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so"});
}

TEST_CASE("a hook in any other form is not read as ours") {
  const auto hooks = our_hooks();
  const Json ours = as_spec_hook(gcr::update_libraries_hook(hooks, {"/usr/lib64"}, {}));
  const auto changed = [&](const auto& change) {
    Json hook = ours;
    change(hook);
    return gcr::read_update_libraries_hook(hook, hooks).has_value();
  };
  CHECK(changed([](Json&) {}));
  CHECK_FALSE(changed([](Json& h) { h["path"] = "/opt/other/gpu-ctk"; }));
  CHECK_FALSE(changed([](Json& h) { h["path"] = 7; }));
  CHECK_FALSE(changed([](Json& h) { h.erase("args"); }));
  CHECK_FALSE(changed([](Json& h) { h["args"][2] = "update-ldcache"; }));
  CHECK_FALSE(changed([](Json& h) { h["args"].push_back("--unknown"); }));
  CHECK_FALSE(changed([](Json& h) { h["args"].push_back("--folder"); }));
  CHECK_FALSE(changed([](Json& h) { h["args"].push_back(Json::array()); }));
  CHECK_FALSE(changed([](Json& h) {  // a second ldconfig
    h["args"].push_back("--ldconfig-path");
    h["args"].push_back("@/x");
  }));
  CHECK_FALSE(changed([](Json& h) {  // none
    h["args"].erase(3);
    h["args"].erase(3);
  }));
  CHECK_FALSE(changed([](Json& h) { h = Json::array(); }));
}

TEST_CASE("enable-cuda-compat and disable-device-node-modification read back only as written") {
  const auto hooks = our_hooks();
  const Json compat =
      as_spec_hook(gcr::enable_cuda_compat_hook(hooks, "470.57.02", "/usr/local/cuda/compat"));
  const auto read = gcr::read_enable_cuda_compat_hook(compat, hooks);
  REQUIRE(read);
  CHECK(read->host_driver_version == "470.57.02");
  CHECK(read->dir == "/usr/local/cuda/compat");
  const Json params = as_spec_hook(gcr::disable_device_node_modification_hook(hooks));
  CHECK(params["args"] == Json::array({"gpu-ctk", "hook", "disable-device-node-modification"}));
  CHECK(gcr::is_device_node_modification_hook(params, hooks));
  CHECK_FALSE(gcr::read_enable_cuda_compat_hook(params, hooks));
  CHECK_FALSE(gcr::is_device_node_modification_hook(compat, hooks));
  for (Json other : {compat, params}) {
    Json elsewhere = other;
    elsewhere["path"] = "/tmp/gpu-ctk";
    CHECK_FALSE(gcr::read_enable_cuda_compat_hook(elsewhere, hooks));
    CHECK_FALSE(gcr::is_device_node_modification_hook(elsewhere, hooks));
    other["args"].push_back("--more");
    CHECK_FALSE(gcr::read_enable_cuda_compat_hook(other, hooks));
    CHECK_FALSE(gcr::is_device_node_modification_hook(other, hooks));
  }
  Json numeric = compat;
  numeric["args"][4] = 470;
  CHECK_FALSE(gcr::read_enable_cuda_compat_hook(numeric, hooks));
}

TEST_CASE("update-application-profile reads back only as written, and is no other hook") {
  const auto hooks = our_hooks();
  const Json profile = as_spec_hook(gcr::update_application_profile_hook(hooks));
  CHECK(profile["args"] == Json::array({"gpu-ctk", "hook", "update-application-profile"}));
  CHECK(gcr::is_application_profile_hook(profile, hooks));
  CHECK_FALSE(gcr::is_device_node_modification_hook(profile, hooks));
  CHECK_FALSE(gcr::is_application_profile_hook(
      as_spec_hook(gcr::disable_device_node_modification_hook(hooks)), hooks));
  Json elsewhere = profile;
  elsewhere["path"] = "/usr/bin/nvidia-cdi-hook";
  CHECK_FALSE(gcr::is_application_profile_hook(elsewhere, hooks));
  Json more = profile;
  more["args"].push_back("--more");
  CHECK_FALSE(gcr::is_application_profile_hook(more, hooks));
  CHECK_FALSE(gcr::is_application_profile_hook(Json::array(), hooks));
}
