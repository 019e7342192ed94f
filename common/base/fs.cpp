#include "base/fs.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gcr {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string errno_text(int err) {
  return std::strerror(err);
}

Result<Fd> open_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{errno_text(errno) + " (" + path + ")"};
  return Fd(fd);
}

Result<std::string> read_fd(int fd, std::size_t max_bytes) {
  std::string data;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{"read failed: " + errno_text(errno)};
    }
    if (n == 0) return data;
    if (data.size() + static_cast<std::size_t>(n) > max_bytes) {
      return Error{"larger than " + std::to_string(max_bytes) + " bytes"};
    }
    data.append(buf, static_cast<std::size_t>(n));
  }
}

Result<std::string> read_regular_file_at(int dirfd, const std::string& name, std::size_t max_bytes,
                                         bool follow) {
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW);
  Fd fd(::openat(dirfd, name.c_str(), flags));
  if (!fd.valid()) {
    if (errno == ELOOP && !follow) return Error{"is a symbolic link"};
    return Error{errno_text(errno)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error{errno_text(errno)};
  if (!S_ISREG(st.st_mode)) return Error{"is not a regular file"};
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    return Error{"larger than " + std::to_string(max_bytes) + " bytes"};
  }
  return read_fd(fd.get(), max_bytes);
}

Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  return read_regular_file_at(AT_FDCWD, path, max_bytes, true);
}

Status make_directories(const std::string& path) {
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const std::string prefix = path.substr(0, at);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return Error{"cannot create " + prefix + ": " + errno_text(errno)};
    }
    if (at == std::string::npos) return {};
  }
}

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{errno_text(errno)};
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

std::string temp_name_for(const std::string& name) {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    const auto pid = static_cast<unsigned>(::getpid());
    std::memcpy(bytes, &pid, sizeof pid);
  }
  static const char* hex = "0123456789abcdef";
  std::string suffix;
  for (unsigned char b : bytes) {
    suffix += hex[b >> 4];
    suffix += hex[b & 0xf];
  }
  return "." + name + "." + suffix + ".tmp";
}

namespace {

Status fill_temp_file(int fd, std::string_view data, const FileOwner& owner) {
  if (::fchmod(fd, owner.mode) != 0) return Error{"chmod: " + errno_text(errno)};
  if ((owner.uid != static_cast<uid_t>(-1) || owner.gid != static_cast<gid_t>(-1)) &&
      ::fchown(fd, owner.uid, owner.gid) != 0) {
    return Error{"chown: " + errno_text(errno)};
  }
  if (auto s = write_all(fd, data); !s) return s.error().wrap("write");
  if (::fsync(fd) != 0) return Error{"fsync: " + errno_text(errno)};
  return {};
}

}  // namespace

Status write_file_atomic_at(int dirfd, const std::string& name, std::string_view data,
                            const FileOwner& owner) {
  const std::string temp = temp_name_for(name);
  Fd fd(::openat(dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 owner.mode));
  if (!fd.valid()) return Error{"cannot create temporary file: " + errno_text(errno)};
  Status filled = fill_temp_file(fd.get(), data, owner);
  if (filled && ::renameat(dirfd, temp.c_str(), dirfd, name.c_str()) != 0) {
    filled = Error{"rename: " + errno_text(errno)};
  }
  if (!filled) {
    ::unlinkat(dirfd, temp.c_str(), 0);
    return filled;
  }
  if (::fsync(dirfd) != 0) return Error{"fsync of directory: " + errno_text(errno)};
  return {};
}

}  // namespace gcr
