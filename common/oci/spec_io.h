// Reading and writing a bundle's config.json: strict on the way in (regular file, at most
// 64 MiB, strict JSON, an object), atomic on the way out (same mode and owner).
#pragma once

#include <string>

#include "base/fs.h"
#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

inline constexpr std::size_t kMaxSpecBytes = 64u << 20;

struct BundleSpec {
  Fd dir;            // the bundle directory
  std::string path;  // <bundle>/config.json, for messages
  FileOwner owner;   // mode, uid and gid of the original file
  Json spec;
};

// `bundle` "" means the working directory, as for runc.
[[nodiscard]] Result<BundleSpec> read_bundle_spec(const std::string& bundle);

// Replaces config.json atomically with `spec`.
[[nodiscard]] Status write_bundle_spec(const BundleSpec& bundle, const Json& spec);

// The serialised form we write: compact, one object, UTF-8 kept as is.
[[nodiscard]] std::string serialize_spec(const Json& spec);

}  // namespace gcr
