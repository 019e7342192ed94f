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
