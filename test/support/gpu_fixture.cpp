#include "gpu_fixture.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace gcr::test {

GpuFixture::GpuFixture(const SimHostOptions& options, const Json& extra_config)
    : ShimFixture(), host_(path("host"), options) {
  configure(extra_config);
}

void GpuFixture::configure(const Json& extra) const {
  Json config = host_.driver_config();
  config["hooks"] = {{"ctk-path", built("gpu-ctk")}};
  config["runtime"] = {{"state-dir", path("state")}};
  config.merge_patch(extra);
  write_config(config);
}

ProcessResult GpuFixture::create(const std::vector<std::string>& env, const Json& patch) const {
  Json spec = busybox_spec({"/bin/sh"});
  spec["process"]["env"] = env;
  spec.merge_patch(patch);
  write_spec(spec.dump(2));
  return shim({"create", "--bundle", bundle(), "ctr"});
}

void GpuFixture::use_real_runc() const {
  configure({{"runtime", {{"runtimes", {runc_path()}}}}});
  make_glibc_rootfs(bundle());
}

ProcessResult GpuFixture::run_busybox(const std::vector<std::string>& env,
                                      const std::string& script, const Json& patch) const {
  Json spec = busybox_spec({"/bin/sh", "-c", script});
  for (const auto& e : env) spec["process"]["env"].push_back(e);
  spec.merge_patch(patch);
  write_spec(spec.dump(2));
  return shim({"--root", path("runc-root"), "run", "--bundle", bundle(), "gcr-busybox"});
}

Json GpuFixture::spec() const {
  auto spec = parse_json_strict(read_file(spec_path()));
  if (!spec) throw std::runtime_error("config.json: " + spec.error().message);
  return *spec;
}

std::map<std::string, std::string> GpuFixture::devices() const {
  std::map<std::string, std::string> out;
  const Json s = spec();
  if (!s.contains("linux") || !s["linux"].contains("devices")) return out;
  for (const auto& d : s["linux"]["devices"]) {
    out[d["path"]] =
        std::to_string(d["major"].get<int>()) + ":" + std::to_string(d["minor"].get<int>());
  }
  return out;
}

std::vector<std::string> GpuFixture::mount_destinations() const {
  std::vector<std::string> out;
  const Json s = spec();
  for (const auto& m : s["mounts"]) out.push_back(m["destination"]);
  return out;
}

std::vector<std::string> GpuFixture::hook_names() const {
  std::vector<std::string> out;
  const Json s = spec();
  if (!s.contains("hooks") || !s["hooks"].contains("createContainer")) return out;
  for (const auto& h : s["hooks"]["createContainer"]) {
    const bool ours = h.contains("args") && h["args"].size() > 2 && h["args"][1] == "hook";
    out.push_back(ours ? h["args"][2].get<std::string>() : h["path"].get<std::string>());
  }
  return out;
}

Json GpuFixture::mount_at(const std::string& destination) const {
  const Json s = spec();
  for (const auto& m : s["mounts"]) {
    if (m["destination"] == destination) return m;
  }
  return nullptr;
}

LoggedFixture::LoggedFixture(const SimHostOptions& options) : GpuFixture(options) {
  configure(Json::object());
}

void LoggedFixture::configure(const Json& extra) const {
  Json config = Json::object();
  config["runtime"] = {{"log-file", path("shim.log")}, {"log-level", "debug"}};
  config.merge_patch(extra);
  GpuFixture::configure(config);
}

std::vector<std::string> LoggedFixture::logged(const std::string& level) const {
  std::vector<std::string> out;
  if (!exists(path("shim.log"))) return out;
  std::ifstream in(path("shim.log"));
  for (std::string line; std::getline(in, line);) {
    const Json entry = Json::parse(line);
    if (entry["level"] == level) out.push_back(entry["msg"]);
  }
  return out;
}

bool LoggedFixture::warned(const std::string& part) const {
  const auto warnings = logged("warning");
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

}  // namespace gcr::test
