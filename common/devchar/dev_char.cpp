#include "devchar/dev_char.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "base/fs.h"
#include "base/text.h"
#include "driver/proc.h"
#include "vocabulary/imex_channel.h"

namespace gcr {
namespace {

constexpr unsigned kNvidiaMajor = 195;
constexpr unsigned kCtlMinor = 255;
constexpr unsigned kModesetMinor = 254;
constexpr std::size_t kMaxProcFileBytes = 1 << 20;

// The dev root's /dev by its real path; "" when it has none.
std::string real_dev_dir(const DeviceNodes& nodes) {
  char real[PATH_MAX];
  if (::realpath(nodes.dev_path("/dev").c_str(), real) == nullptr) return "";
  return real;
}

// The nodes of `pattern` in the dev root's `dir` ("/dev", "/dev/nvidia-caps"), at their path
// below `real_dev`.
void add_nodes(DeviceNodes& nodes, const std::string& real_dev, const std::string& dir,
               const std::string& pattern, std::vector<CharNode>& out) {
  for (const auto& node : nodes.char_nodes(dir, pattern)) {
    out.push_back(CharNode{real_dev + node.path.substr(4), static_cast<unsigned>(*node.major),
                           static_cast<unsigned>(*node.minor)});
  }
}

// The MIG capability minors of `mig` for the GPUs of `gpu_minors` (keys "gpu<minor>/...").
std::vector<unsigned> cap_minors(const MigMinors& mig, const std::set<unsigned>& gpu_minors) {
  std::vector<unsigned> out;
  if (mig.config) out.push_back(*mig.config);
  if (mig.monitor) out.push_back(*mig.monitor);
  for (const auto& [path, minor] : mig.by_path) {
    const std::string gpu = path.substr(0, path.find('/'));
    const auto number = gpu.rfind("gpu", 0) == 0 ? parse_decimal(gpu.substr(3)) : std::nullopt;
    if (number && gpu_minors.count(static_cast<unsigned>(*number)) != 0) out.push_back(minor);
  }
  return out;
}

std::string entry_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device node";
  return "a file that is no symlink";
}

// The error of a link not made because `what` holds its name.
Error in_the_way(const PlannedLink& link, const std::string& what, const std::string& where) {
  return Error{"cannot link " + link.name + " to " + link.target + ": " + what +
               " is in the way (" + where + ")"};
}

}  // namespace

std::string dev_char_name(const CharNode& node) {
  return std::to_string(node.major) + ":" + std::to_string(node.minor);
}

std::vector<CharNode> present_nvidia_nodes(DeviceNodes& nodes) {
  const std::string dev = real_dev_dir(nodes);
  std::vector<CharNode> found;
  if (dev.empty()) return found;
  add_nodes(nodes, dev, "/dev", "nvidia*", found);
  add_nodes(nodes, dev, "/dev/nvidia-caps", "*", found);
  add_nodes(nodes, dev, kImexChannelDir, "*", found);
  return with_announced({}, found);
}

Result<std::vector<CharNode>> announced_nvidia_nodes(DeviceNodes& nodes) {
  if (auto version = nodes.version(); !version) return version.error();
  auto gpus = nodes.gpus();
  if (!gpus) return gpus.error();
  const std::string devices_path = nodes.dev_path("/proc/devices");
  auto devices = read_regular_file(devices_path, kMaxProcFileBytes);
  if (!devices)
    return Error{"cannot read the device majors: " + devices.error().message + " (" + devices_path +
                 ")"};
  const auto majors = parse_char_majors(*devices);
  std::string dev = real_dev_dir(nodes);
  if (dev.empty()) dev = clean_path(nodes.dev_path("/dev"));
  std::vector<CharNode> out;
  std::set<unsigned> gpu_minors;
  for (const auto& gpu : *gpus) {
    out.push_back({dev + "/nvidia" + std::to_string(gpu.minor), kNvidiaMajor, gpu.minor});
    gpu_minors.insert(gpu.minor);
  }
  out.push_back({dev + "/nvidiactl", kNvidiaMajor, kCtlMinor});
  out.push_back({dev + "/nvidia-modeset", kNvidiaMajor, kModesetMinor});
  if (const auto uvm = majors.find("nvidia-uvm"); uvm != majors.end()) {
    out.push_back({dev + "/nvidia-uvm", uvm->second, 0});
    out.push_back({dev + "/nvidia-uvm-tools", uvm->second, 1});
  }
  const auto caps = majors.find("nvidia-caps");
  if (caps == majors.end()) return out;
  if (auto mig = nodes.mig_minors()) {
    for (const unsigned minor : cap_minors(*mig, gpu_minors))
      out.push_back({dev + "/nvidia-caps/nvidia-cap" + std::to_string(minor), caps->second, minor});
  }
  return out;
}

std::vector<CharNode> with_announced(std::vector<CharNode> present,
                                     const std::vector<CharNode>& announced) {
  std::set<std::string> numbers;
  std::erase_if(present,
                [&](const CharNode& n) { return !numbers.insert(dev_char_name(n)).second; });
  for (const auto& node : announced) {
    if (numbers.insert(dev_char_name(node)).second) present.push_back(node);
  }
  return present;
}

std::string relative_target(const std::string& from_dir, const std::string& to) {
  if (from_dir.empty() || from_dir.front() != '/' || to.empty() || to.front() != '/') return to;
  const std::string from_clean = clean_path(from_dir);
  const std::string to_clean = clean_path(to);
  std::vector<std::string_view> from;
  std::vector<std::string_view> target;
  for (auto part : split(from_clean, '/'))
    if (!part.empty()) from.push_back(part);
  for (auto part : split(to_clean, '/'))
    if (!part.empty()) target.push_back(part);
  std::size_t common = 0;
  while (common < from.size() && common < target.size() && from[common] == target[common]) ++common;
  std::string out;
  for (std::size_t i = common; i < from.size(); ++i) out += "../";
  for (std::size_t i = common; i < target.size(); ++i) {
    out += target[i];
    if (i + 1 < target.size()) out += "/";
  }
  if (out.empty()) return ".";
  if (out.back() == '/') out.pop_back();
  return out;
}

std::vector<PlannedLink> plan_links(
    const std::vector<CharNode>& nodes, const std::string& dev_char_dir,
    const std::function<LinkEntry(const std::string& name)>& entry_at) {
  std::vector<PlannedLink> plan;
  std::set<std::string> names;
  for (const auto& node : nodes) {
    PlannedLink link;
    link.name = dev_char_name(node);
    link.target = relative_target(dev_char_dir, node.path);
    if (!names.insert(link.name).second) continue;
    const LinkEntry entry = entry_at(link.name);
    switch (entry.kind) {
      case LinkEntry::Kind::kNone:
        link.action = LinkAction::kCreate;
        break;
      case LinkEntry::Kind::kSymlink:
        link.action = entry.target == link.target ? LinkAction::kKeep : LinkAction::kReplace;
        if (link.action == LinkAction::kReplace) link.found = entry.target;
        break;
      case LinkEntry::Kind::kOther:
        link.action = LinkAction::kRefuse;
        link.found = entry.what;
        break;
    }
    plan.push_back(std::move(link));
  }
  return plan;
}

Result<DevCharDir> DevCharDir::open(const std::string& path, bool make) {
  if (make) {
    if (auto made = make_directories(path); !made)
      return Error{"cannot make the /dev/char directory: " + made.error().message};
  }
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) {
    if (errno == ENOENT && !make) return DevCharDir(Fd(), clean_path(path));
    return Error{"cannot open the /dev/char directory: " + errno_text(errno) + " (" + path + ")"};
  }
  auto fd = open_directory(real);
  if (!fd) return Error{"cannot open the /dev/char directory: " + fd.error().message};
  return DevCharDir(std::move(*fd), real);
}

LinkEntry DevCharDir::entry(const std::string& name) const {
  if (!fd_.valid()) return {};
  struct stat st {};
  if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return {LinkEntry::Kind::kOther, "", "something that cannot be read: " + errno_text(errno)};
  }
  if (!S_ISLNK(st.st_mode)) return {LinkEntry::Kind::kOther, "", entry_kind(st.st_mode)};
  char target[PATH_MAX];
  const ssize_t n = ::readlinkat(fd_.get(), name.c_str(), target, sizeof target - 1);
  if (n < 0) return {LinkEntry::Kind::kOther, "", "a link that cannot be read"};
  return {LinkEntry::Kind::kSymlink, std::string(target, static_cast<std::size_t>(n)), ""};
}

Status DevCharDir::apply(PlannedLink& link) const {
  const std::string where = child_path(path_, link.name);
  switch (link.action) {
    case LinkAction::kKeep:
      return {};
    case LinkAction::kRefuse:
      return in_the_way(link, link.found, where);
    case LinkAction::kCreate: {
      if (::symlinkat(link.target.c_str(), fd_.get(), link.name.c_str()) == 0) return {};
      if (errno != EEXIST)
        return Error{"cannot create the link: " + errno_text(errno) + " (" + where + ")"};
      // Made since the plan (udev runs the rule for several nodes at once): kept when it says
      // what we would write, replaced when it is another link; the plan says which.
      const auto now = entry(link.name);
      if (now.kind == LinkEntry::Kind::kOther) return in_the_way(link, now.what, where);
      if (now.kind == LinkEntry::Kind::kSymlink && now.target == link.target) {
        link.action = LinkAction::kKeep;
        return {};
      }
      if (now.kind == LinkEntry::Kind::kSymlink) {
        link.action = LinkAction::kReplace;
        link.found = now.target;
      }
      break;
    }
    case LinkAction::kReplace:
      break;
  }
  const std::string temp = temp_name_for(link.name);
  if (::symlinkat(link.target.c_str(), fd_.get(), temp.c_str()) != 0)
    return Error{"cannot create the link: " + errno_text(errno) + " (" + child_path(path_, temp) +
                 ")"};
  if (::renameat(fd_.get(), temp.c_str(), fd_.get(), link.name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(fd_.get(), temp.c_str(), 0);
    return Error{"cannot replace the link: " + errno_text(err) + " (" + where + ")"};
  }
  return {};
}

std::string link_line(const std::string& dev_char_dir, const PlannedLink& link, bool dry_run) {
  const std::string link_text = child_path(dev_char_dir, link.name) + " -> " + link.target;
  switch (link.action) {
    case LinkAction::kKeep:
      return (dry_run ? "would keep " : "kept ") + link_text;
    case LinkAction::kCreate:
      return (dry_run ? "would create " : "created ") + link_text;
    case LinkAction::kReplace:
      return (dry_run ? "would replace " : "replaced ") + link_text + " (it led to " + link.found +
             ")";
    case LinkAction::kRefuse:
      break;
  }
  return "would refuse " + link_text + ": " + link.found + " is in the way";
}

DevCharRun sync_links(const std::vector<CharNode>& nodes, const std::string& dev_char_path,
                      bool dry_run) {
  DevCharRun run;
  auto dir = DevCharDir::open(dev_char_path, !dry_run);
  if (!dir) {
    run.errors.push_back(dir.error().message);
    return run;
  }
  run.dir = dir->path();
  run.plan =
      plan_links(nodes, dir->path(), [&](const std::string& name) { return dir->entry(name); });
  if (dry_run) return run;
  for (auto& link : run.plan) {
    if (auto done = dir->apply(link); !done) run.errors.push_back(done.error().message);
  }
  return run;
}

std::vector<CharNode> unlinked_nodes(const std::vector<CharNode>& nodes,
                                     const std::string& dev_char_dir, const NodeStatFn& stat) {
  std::vector<CharNode> out;
  for (const auto& node : nodes) {
    auto st = stat(child_path(dev_char_dir, dev_char_name(node)));
    if (!st || st->type != 'c' || st->major != node.major || st->minor != node.minor)
      out.push_back(node);
  }
  return out;
}

}  // namespace gcr
