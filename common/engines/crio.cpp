// CRI-O: a drop-in under crio.conf.d with the runtime handler (and the default, if asked).
#include "engines/engines.h"

namespace gcr {

Result<std::vector<FileChange>> plan_crio(const ConfigureOptions& options,
                                          const ExistingFile& drop_in) {
  if (options.remove) {
    if (!drop_in.content) return std::vector<FileChange>{};
    return std::vector<FileChange>{{drop_in.path, std::nullopt}};
  }
  std::string text =
      "# Written by gpu-ctk runtime configure: gpu-container-runtime as a CRI-O runtime handler.\n";
  if (options.set_as_default)
    text += "[crio.runtime]\ndefault_runtime = \"" + options.runtime_name + "\"\n\n";
  text += "[crio.runtime.runtimes." + options.runtime_name + "]\nruntime_path = \"" +
          options.runtime_path + "\"\nruntime_type = \"oci\"\n";
  if (drop_in.content == text) return std::vector<FileChange>{};
  return std::vector<FileChange>{{drop_in.path, text}};
}

}  // namespace gcr
