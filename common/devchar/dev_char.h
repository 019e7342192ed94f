// The /dev/char/<major>:<minor> links of NVIDIA's device nodes. With cgroup v2 and systemd, a
// `systemctl daemon-reload` rewrites a container's device rules from the /dev/char names systemd
// can stat; NVIDIA's nodes are made by nvidia-modprobe, not by udev, so they have none, and the
// container loses its GPUs. This finds the nodes, plans one link per node (relative, as udev
// writes them: ../nvidia0), and makes or repairs the links atomically.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/fs.h"
#include "base/node_stat.h"
#include "base/result.h"
#include "driver/device_nodes.h"

namespace gcr {

// A character device node and its numbers; `path` is its host path.
struct CharNode {
  std::string path;
  unsigned major = 0;
  unsigned minor = 0;
  bool operator==(const CharNode&) const = default;
};

// "195:0"
[[nodiscard]] std::string dev_char_name(const CharNode& node);

// NVIDIA's character device nodes present in the dev root's /dev: every nvidia* (GPUs,
// nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset, nvidia-nvswitch*, nvidia-nvlink...)
// and every node in nvidia-caps/ and nvidia-caps-imex-channels/. A second node with the numbers
// of one before it is left out. Paths are below the dev root's real /dev (symlinks resolved).
[[nodiscard]] std::vector<CharNode> present_nvidia_nodes(DeviceNodes& nodes);

// The nodes the loaded driver announces, whether they exist yet or not: nvidia<minor> of each
// GPU it lists, nvidiactl and nvidia-modeset; nvidia-uvm and nvidia-uvm-tools once
// proc/devices lists nvidia-uvm; the MIG capabilities (config, monitor, those of the GPUs
// listed) once it lists nvidia-caps. An error when the driver is not loaded.
[[nodiscard]] Result<std::vector<CharNode>> announced_nvidia_nodes(DeviceNodes& nodes);

// `present`, then the nodes of `announced` whose numbers are not among them.
[[nodiscard]] std::vector<CharNode> with_announced(std::vector<CharNode> present,
                                                   const std::vector<CharNode>& announced);

// What is at a name in the /dev/char directory now.
struct LinkEntry {
  enum class Kind { kNone, kSymlink, kOther };
  Kind kind = Kind::kNone;
  std::string target;  // kSymlink: the link's text
  std::string what;    // kOther: "a regular file", "a directory", ...
};

enum class LinkAction {
  kKeep,     // the link is there and says what we would write
  kCreate,   // nothing there
  kReplace,  // a link with another target: replaced atomically
  kRefuse,   // something that is no symlink: left alone, an error
};

struct PlannedLink {
  std::string name;    // "195:0"
  std::string target;  // "../nvidia0"
  LinkAction action = LinkAction::kCreate;
  std::string found;  // kReplace: the old target; kRefuse: what is in the way
  bool operator==(const PlannedLink&) const = default;
};

// The target a link in `from_dir` names `to` with: a relative path when both are absolute
// ("/dev/char", "/dev/nvidia0" -> "../nvidia0"), compared lexically; `to` itself otherwise.
[[nodiscard]] std::string relative_target(const std::string& from_dir, const std::string& to);

// One link per node in `dev_char_dir`, in the nodes' order; `entry_at` says what is at a name.
[[nodiscard]] std::vector<PlannedLink> plan_links(
    const std::vector<CharNode>& nodes, const std::string& dev_char_dir,
    const std::function<LinkEntry(const std::string& name)>& entry_at);

// The /dev/char directory, opened by its real path. `make`: made (0755) when missing; else a
// missing directory is opened as an empty one.
class DevCharDir {
 public:
  [[nodiscard]] static Result<DevCharDir> open(const std::string& path, bool make);
  // Its real path (symlinks resolved), which link targets are relative to.
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] LinkEntry entry(const std::string& name) const;
  // Carries out one planned link: a new one made in place, a wrong one replaced by a link at a
  // temporary name renamed over it. kKeep does nothing; kRefuse is the error it stands for. A
  // link another run made since the plan is kept or replaced, and `link` says which.
  [[nodiscard]] Status apply(PlannedLink& link) const;

 private:
  DevCharDir(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Fd fd_;
  std::string path_;
};

// The line a planned link is reported with once carried out: "created /dev/char/195:0 ->
// ../nvidia0", "replaced ... (it led to /dev/nvidia1)", "kept ..."; with `dry_run`, what would
// be done ("would create ...", "would refuse ...: a regular file is in the way").
[[nodiscard]] std::string link_line(const std::string& dev_char_dir, const PlannedLink& link,
                                    bool dry_run);

// One pass: the links of `nodes` planned in `dev_char_path` and, unless `dry_run`, made.
struct DevCharRun {
  std::string dir;                  // the directory's real path
  std::vector<PlannedLink> plan;    // every link, with what was (or would be) done
  std::vector<std::string> errors;  // one line per link not made, or the directory's error
};
[[nodiscard]] DevCharRun sync_links(const std::vector<CharNode>& nodes,
                                    const std::string& dev_char_path, bool dry_run);

// The nodes whose link in `dev_char_dir` does not lead to them (missing, dangling, or another
// device): `stat` follows symlinks.
[[nodiscard]] std::vector<CharNode> unlinked_nodes(const std::vector<CharNode>& nodes,
                                                   const std::string& dev_char_dir,
                                                   const NodeStatFn& stat);

}  // namespace gcr
