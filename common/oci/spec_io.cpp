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

constexpr const char* kNotAnObject = "the top level is not a JSON object";

Error spec_error(const std::string& path, const std::string& why) {
  return Error{"cannot read the container spec: " + why + " (" + path + ")"};
}

// Whether a valid document is an object: its first character is `{`.
bool top_level_is_object(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\n\r");
  return first != std::string_view::npos && text[first] == '{';
}

}  // namespace

Result<BundleText> read_bundle_text(const std::string& bundle) {
  const std::string dir = bundle.empty() ? "." : bundle;
  const std::string path = dir + "/" + kSpecName;
  auto dirfd = open_directory(dir);
  if (!dirfd) return spec_error(path, "bundle directory: " + dirfd.error().message);
  auto text = read_regular_file_at(dirfd->get(), kSpecName, kMaxSpecBytes, false);
  if (!text) return spec_error(path, text.error().message);
  return BundleText{std::move(*dirfd), path, std::move(*text)};
}

Result<bool> bundle_has_string(const BundleText& bundle,
                               const std::function<bool(std::string_view)>& wanted) {
  auto found = json_has_string(bundle.text, wanted);
  if (!found) return spec_error(bundle.path, found.error().message);
  if (!*found && !top_level_is_object(bundle.text)) return spec_error(bundle.path, kNotAnObject);
  return found;
}

Result<BundleSpec> parse_bundle_spec(BundleText bundle) {
  auto spec = parse_json_strict(bundle.text);
  if (!spec) return spec_error(bundle.path, spec.error().message);
  if (!spec->is_object()) return spec_error(bundle.path, kNotAnObject);
  auto owner = owner_of(bundle.dir.get());
  if (!owner) return spec_error(bundle.path, owner.error().message);
  return BundleSpec{std::move(bundle.dir), std::move(bundle.path), *owner, std::move(*spec)};
}

Result<BundleSpec> read_bundle_spec(const std::string& bundle) {
  auto text = read_bundle_text(bundle);
  if (!text) return text.error();
  return parse_bundle_spec(std::move(*text));
}

std::string serialize_spec(const Json& spec) {
  // A GPU container's spec is 8 to 30 KiB: room for it at once (and its newline).
  constexpr std::size_t kUsualSpecBytes = 32 << 10;
  std::string text = json_text(spec, 2, kUsualSpecBytes);
  text += '\n';
  return text;
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
