#include "hooks/driver_params.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/fs.h"

namespace gcr {
namespace {

constexpr std::string_view kModifying = "ModifyDeviceFiles: 1";
constexpr std::string_view kNotModifying = "ModifyDeviceFiles: 0";

constexpr std::size_t kMaxParamsBytes = 64 << 10;  // the driver's are under 1 KiB

// The container's params file, to mount over (no symlink followed; the mounts runc made there,
// the container's /proc and /dev, crossed); nothing when it has none.
Result<std::optional<Fd>> params_in(const RootFs& root) {
  auto fd = root.open_across_mounts(kDriverParamsPath, O_PATH);
  if (!fd) return Error{"cannot open it: " + fd.error().message};
  return fd;
}

// What the file `target` says, with device-node modification off; nothing when it is off.
Result<std::optional<std::string>> params_to_mount(const Fd& target, const std::string& what) {
  auto file = reopen_regular(target, what);
  if (!file) return file.error();
  auto text = read_fd(file->get(), kMaxParamsBytes);
  if (!text) return text.error().wrap(what);
  return without_device_node_modification(*text);
}

Status write_new_file(int dir, const std::string& name, std::string_view content) {
  Fd file(::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444));
  if (!file.valid()) return Error{"cannot create the copy in /dev: " + errno_text(errno)};
  return write_all(file.get(), content);
}

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

// The same with mount(2), for kernels without the new mount API (mount_setattr is Linux 5.12):
// a bind, then a remount of the bind itself, named through the folder opened before (the file
// fd `target` still names the one beneath), which is also where a failed remount unmounts it.
Status bind_file_over(const RootFs& root, int dir, const std::string& name, int target) {
  Fd source(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!source.valid()) return Error{"cannot open the copy in /dev: " + errno_text(errno)};
  const std::string params(kDriverParamsPath);
  auto folder = root.open_across_mounts(params.substr(0, params.rfind('/')), O_PATH | O_DIRECTORY);
  if (!folder || !*folder) return Error{"cannot open the folder of the params file again"};
  if (::mount(fd_path(source.get()).c_str(), fd_path(target).c_str(), nullptr, MS_BIND, nullptr) !=
      0)
    return Error{"mount: " + errno_text(errno)};
  const std::string bound = fd_path((*folder)->get()) + params.substr(params.rfind('/'));
  const int flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (::mount(nullptr, bound.c_str(), nullptr, static_cast<unsigned long>(flags), nullptr) == 0)
    return {};
  const std::string why = errno_text(errno);
  ::umount2(bound.c_str(), MNT_DETACH);
  return Error{"read-only remount: " + why};
}

// Mounts the file `name` of `dir` over `target`: read-only, nosuid, nodev, noexec.
Status mount_file_over(const RootFs& root, int dir, const std::string& name, int target) {
  Fd tree(
      ::open_tree(dir, name.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
  if (!tree.valid() && errno == ENOSYS) return bind_file_over(root, dir, name, target);
  if (!tree.valid()) return Error{"open_tree: " + errno_text(errno)};
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    if (errno == ENOSYS) return bind_file_over(root, dir, name, target);
    return Error{"mount_setattr: " + errno_text(errno)};
  }
  if (::move_mount(tree.get(), "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) !=
      0)
    return Error{"move_mount: " + errno_text(errno)};
  return {};
}

}  // namespace

std::optional<std::string> without_device_node_modification(std::string_view params) {
  std::string out;
  bool changed = false;
  for (std::size_t start = 0; start < params.size();) {
    const std::size_t end = std::min(params.find('\n', start), params.size());
    const std::string_view line = params.substr(start, end - start);
    changed = changed || line == kModifying;
    out += line == kModifying ? kNotModifying : line;
    if (end < params.size()) out += '\n';
    start = end + 1;
  }
  if (!changed) return std::nullopt;
  return out;
}

Result<bool> disable_device_node_modification(const RootFs& root) {
  const std::string what = std::string(kDriverParamsPath) + " in the container";
  auto target = params_in(root);
  if (!target) return target.error().wrap(what);
  if (!*target) return false;
  auto content = params_to_mount(**target, what);
  if (!content) return content.error();
  if (!*content) return false;
  auto opened = root.open_across_mounts("/dev", O_RDONLY | O_DIRECTORY);
  if (!opened || !*opened)
    return Error{"cannot open /dev in the container: " +
                 (opened ? errno_text(ENOENT) : opened.error().message)};
  const Fd& dev = **opened;
  // Mounted while it has a name (the kernel refuses an unlinked source), then unlinked.
  const std::string name = temp_name_for("nvidia-params");
  Status done = write_new_file(dev.get(), name, **content);
  if (done) done = mount_file_over(root, dev.get(), name, (*target)->get());
  ::unlinkat(dev.get(), name.c_str(), 0);
  if (!done) return done.error().wrap("cannot mount over " + what);
  return true;
}

}  // namespace gcr
