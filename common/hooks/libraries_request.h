// What the update-libraries hook is asked to do: the links to make in the container, the
// library folders to add to its loader cache, and the host's ldconfig that indexes them. The
// shim writes it into the spec, reads it back to do the work at create, and gpu-ctk parses it
// from the hook's flags.
#pragma once

#include <string>
#include <vector>

namespace gcr {

struct LibrariesRequest {
  std::vector<std::string> folders;
  std::vector<std::string> links;  // "<target>::<link>"
  std::string ldconfig;            // "@<host path>"
};

}  // namespace gcr
