#include "base/node_stat.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include "base/fs.h"

namespace gcr {

namespace {

NodeStat node_stat_of(const struct stat& st) {
  NodeStat out;
  if (S_ISCHR(st.st_mode)) out.type = 'c';
  if (S_ISBLK(st.st_mode)) out.type = 'b';
  if (S_ISFIFO(st.st_mode)) out.type = 'p';
  out.major = major(st.st_rdev);
  out.minor = minor(st.st_rdev);
  out.permissions = st.st_mode & 07777;
  out.uid = st.st_uid;
  out.gid = st.st_gid;
  return out;
}

}  // namespace

Result<NodeStat> lstat_node(const std::string& host_path) {
  struct stat st {};
  if (::lstat(host_path.c_str(), &st) != 0)
    return Error{errno_text(errno) + " (" + host_path + ")"};
  return node_stat_of(st);
}

Result<NodeStat> stat_node(const std::string& host_path) {
  struct stat st {};
  if (::stat(host_path.c_str(), &st) != 0) return Error{errno_text(errno) + " (" + host_path + ")"};
  return node_stat_of(st);
}

}  // namespace gcr
