// Reading and writing a bundle's config.json: strict on the way in (regular file, at most
// 64 MiB, strict JSON, an object), atomic on the way out (same mode and owner).
#pragma once

#include <functional>
#include <string>
#include <string_view>

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

// config.json's text, not parsed yet.
struct BundleText {
  Fd dir;
  std::string path;
  std::string text;
};

// `bundle` "" means the working directory, as for runc.
[[nodiscard]] Result<BundleText> read_bundle_text(const std::string& bundle);
// Whether the spec has a string (key or value) for which `wanted` holds, without building it;
// its errors are parse_bundle_spec's. Reading stops at the first such string: a spec that has
// one is checked by parse_bundle_spec.
[[nodiscard]] Result<bool> bundle_has_string(const BundleText& bundle,
                                             const std::function<bool(std::string_view)>& wanted);
[[nodiscard]] Result<BundleSpec> parse_bundle_spec(BundleText bundle);
[[nodiscard]] Result<BundleSpec> read_bundle_spec(const std::string& bundle);

// Replaces config.json atomically with `spec`.
[[nodiscard]] Status write_bundle_spec(const BundleSpec& bundle, const Json& spec);

// The serialised form we write: compact, one object, UTF-8 kept as is.
[[nodiscard]] std::string serialize_spec(const Json& spec);

}  // namespace gcr
