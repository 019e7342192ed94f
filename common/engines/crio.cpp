// CRI-O: a drop-in under crio.conf.d with the runtime handler (and the default, if asked).
#include "engines/engines.h"
#include "toml/toml.h"

namespace gcr {
namespace {

// The drop-in must say exactly what was asked, whatever characters the path holds.
Status check_drop_in(const std::string& text, const ConfigureOptions& o, const std::string& path) {
  auto back = parse_toml(text, path);
  const auto* runtime =
      back ? (*back)["crio"]["runtime"]["runtimes"][o.runtime_name].as_table() : nullptr;
  const bool same =
      runtime != nullptr && (*runtime)["runtime_path"].value_or(std::string()) == o.runtime_path &&
      (!o.set_as_default ||
       (*back)["crio"]["runtime"]["default_runtime"].value_or(std::string()) == o.runtime_name);
  if (!same) return Error{"cannot write " + path + ": the runtime path cannot be written as TOML"};
  return {};
}

}  // namespace

Result<std::vector<FileChange>> plan_crio(const ConfigureOptions& options,
                                          const ExistingFile& drop_in,
                                          const ExistingFile& old_backup) {
  // CRI-O reads every file of crio.conf.d: the drop-in (ours, whole) is rewritten without a
  // backup beside it, and one an earlier version left there goes.
  std::vector<FileChange> changes;
  if (old_backup.content) changes.push_back({old_backup.path, std::nullopt});
  if (options.remove) {
    if (drop_in.content) changes.push_back({drop_in.path, std::nullopt});
    return changes;
  }
  std::string text =
      "# Written by gpu-ctk runtime configure: gpu-container-runtime as a CRI-O runtime handler.\n";
  if (options.set_as_default)
    text += "[crio.runtime]\ndefault_runtime = " + toml_string(options.runtime_name) + "\n\n";
  text += "[crio.runtime.runtimes." + options.runtime_name +
          "]\nruntime_path = " + toml_string(options.runtime_path) + "\nruntime_type = \"oci\"\n";
  if (auto s = check_drop_in(text, options, drop_in.path); !s) return s.error();
  if (drop_in.content != text) changes.push_back({drop_in.path, text, false});
  return changes;
}

}  // namespace gcr
