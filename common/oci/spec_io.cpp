#include "oci/spec_io.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

namespace gcr {
namespace {

constexpr const char* kSpecName = "config.json";

Result<FileOwner> owner_of(int dirfd) {
  struct stat st {};
  if (::fstatat(dirfd, kSpecName, &st, AT_SYMLINK_NOFOLLOW) != 0) return Error{errno_text(errno)};
  return FileOwner{static_cast<mode_t>(st.st_mode & 07777), st.st_uid, st.st_gid};
}

}  // namespace

Result<BundleSpec> read_bundle_spec(const std::string& bundle) {
  const std::string dir = bundle.empty() ? "." : bundle;
  const std::string path = dir + "/" + kSpecName;
  const auto fail = [&](const std::string& why) {
    return Error{"cannot read the container spec: " + why + " (" + path + ")"};
  };
  auto dirfd = open_directory(dir);
  if (!dirfd) return fail("bundle directory: " + dirfd.error().message);
  auto text = read_regular_file_at(dirfd->get(), kSpecName, kMaxSpecBytes, false);
  if (!text) return fail(text.error().message);
  auto spec = parse_json_strict(*text);
  if (!spec) return fail(spec.error().message);
  if (!spec->is_object()) return fail("the top level is not a JSON object");
  auto owner = owner_of(dirfd->get());
  if (!owner) return fail(owner.error().message);
  return BundleSpec{std::move(*dirfd), path, *owner, std::move(*spec)};
}

std::string serialize_spec(const Json& spec) {
  return json_text(spec, 2) + "\n";
}

Status write_bundle_spec(const BundleSpec& bundle, const Json& spec) {
  // Durable content, not name: every create writes it again, and runc reads it at once.
  auto s = write_file_atomic_at(bundle.dir.get(), kSpecName, serialize_spec(spec), bundle.owner,
                                Durability::kContent);
  if (!s)
    return Error{"cannot write the container spec: " + s.error().message + " (" + bundle.path +
                 ")"};
  return {};
}

}  // namespace gcr
