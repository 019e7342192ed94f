#include "doctor/nvidia_config_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <vector>

#include "base/fs.h"
#include "base/text.h"
#include "compat/nvidia_config.h"

namespace gcr {
namespace {

constexpr const char* kArea = "runtime";

std::string shown(bool value) {
  return value ? "true" : "false";
}

std::string shown(const std::string& value) {
  return "\"" + printable(value, 256) + "\"";
}

// A list whose order does not matter, as one text.
std::string shown_set(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  std::string out = "[";
  for (const auto& v : values) out += (out.size() > 1 ? ", " : "") + shown(v);
  return out + "]";
}

struct Setting {
  const char* key;
  std::function<std::string(const Config&)> value;
};

// The settings NVIDIA's file carries over that change what a container gets. Not compared:
// the log (it changes nothing a container gets), runtimes (NVIDIA's names docker-runc first,
// which a Debian host lacks: the first one found is the same), ldconfig (both prefer
// ldconfig.real where it is there).
const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      {"[requests] accept-env-when-unprivileged",
       [](const Config& c) { return shown(c.requests.accept_env_when_unprivileged); }},
      {"[requests] accept-volume-mounts",
       [](const Config& c) { return shown(c.requests.accept_volume_mounts); }},
      {"[requests] disable-require",
       [](const Config& c) { return shown(c.requests.disable_require); }},
      {"[requests] supported-capabilities",
       [](const Config& c) { return shown_set(c.requests.supported_capabilities); }},
      {"[requests] annotation-prefixes",
       [](const Config& c) { return shown_set(c.requests.annotation_prefixes); }},
      {"[requests] mode", [](const Config& c) { return shown(c.requests.mode); }},
      {"[requests] cuda-compat-dir",
       [](const Config& c) { return shown(c.requests.cuda_compat_dir); }},
      {"[driver] root", [](const Config& c) { return shown(c.driver.root); }},
      {"[cdi] spec-dirs", [](const Config& c) { return shown_set(c.cdi.spec_dirs); }},
      {"[cdi] default-kind", [](const Config& c) { return shown(c.cdi.default_kind); }},
  };
  return table;
}

}  // namespace

void check_nvidia_config(const Config& ours, const std::string& path, Findings& findings) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return;
  const std::string fix =
      "gpu-ctk config import " + path + " shows it as ours; --write installs it";
  auto text = read_regular_file(path, kMaxNvidiaConfigBytes);
  if (!text) {
    findings.warn(kArea,
                  "NVIDIA's configuration is left and cannot be read: " + text.error().message,
                  path, fix);
    return;
  }
  auto imported = import_nvidia_config(*text, path);
  if (!imported) {
    findings.warn(
        kArea,
        "NVIDIA's configuration is left and cannot be read as ours: " + imported.error().message,
        path, fix);
    return;
  }
  const Config defaults;
  std::vector<std::string> missing;
  for (const auto& s : settings()) {
    const std::string theirs = s.value(imported->config);
    if (theirs != s.value(defaults) && theirs != s.value(ours))
      missing.push_back(std::string(s.key) + " = " + theirs);
  }
  const bool widens = !imported->config.requests.accept_env_when_unprivileged &&
                      ours.requests.accept_env_when_unprivileged;
  if (missing.empty()) {
    findings.ok(kArea, "NVIDIA's configuration is left; ours holds what it sets", path);
    return;
  }
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  const std::string message = "NVIDIA's configuration asks for what ours does not have: " + list;
  if (widens) {
    findings.fail(kArea,
                  message +
                      " (unprivileged containers get GPUs from their environment here, "
                      "which NVIDIA's refused)",
                  path, fix);
  } else {
    findings.warn(kArea, message, path, fix);
  }
}

}  // namespace gcr
