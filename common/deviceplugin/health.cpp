#include "deviceplugin/health.h"

#include <sys/stat.h>

#include "base/node_stat.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr unsigned kNvidiaMajor = 195;

std::string node_problem(const Config::Driver& roots, const Gpu& gpu) {
  const std::string node = join_root(roots.dev_root, "/dev/nvidia" + std::to_string(gpu.minor));
  auto st = lstat_node(node);
  if (!st) return "its device node is gone (" + node + ")";
  if (st->type != 'c' || st->major != kNvidiaMajor || st->minor != gpu.minor)
    return "its device node is not 195:" + std::to_string(gpu.minor) + " (" + node + ")";
  return "";
}

std::string proc_problem(const Config::Driver& roots, const Gpu& gpu) {
  const std::string entry =
      join_root(roots.dev_root, "/proc/driver/nvidia/gpus/" + gpu.bus.to_string());
  struct stat st {};
  if (::stat(entry.c_str(), &st) != 0) return "the driver no longer lists it (" + entry + ")";
  return "";
}

}  // namespace

std::map<std::string, std::string> NodeHealth::failing(const std::vector<Gpu>& gpus) {
  std::map<std::string, std::string> out;
  for (const auto& gpu : gpus) {
    std::string why = proc_problem(roots_, gpu);
    if (why.empty()) why = node_problem(roots_, gpu);
    if (!why.empty()) out.emplace(gpu.uuid, why);
  }
  return out;
}

}  // namespace gcr
