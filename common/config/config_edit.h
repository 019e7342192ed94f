// Setting keys in a configuration file's TOML text in place: comments, order and every other
// line kept (what `nvidia-ctk config --set ... --in-place` does to NVIDIA's file, done to ours).
#pragma once

#include <string>

#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

// `text` (a TOML configuration file, "" for none) with each key of `keys` ({"table": {"key":
// value}}) set: a `key = ...` line of that [table] replaced, else the key put under the table's
// header, else the table added at the end. The result must read as the text's own tables with
// those keys set, or it is an error naming `path` (a key written across lines, a dotted or
// quoted name that line edits cannot see).
[[nodiscard]] Result<std::string> config_text_with_keys(const std::string& text, const Json& keys,
                                                        const std::string& path);

}  // namespace gcr
