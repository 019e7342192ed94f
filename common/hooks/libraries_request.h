// What the update-libraries hook is asked to do: the links to make in the container, the
// library folders to add to its loader cache, and the host's ldconfig that indexes them. The
// shim carries it from discovery to the loader-cache step as it is, and writes it into the spec
// as the hook's flags only when it leaves the work to the hook; gpu-ctk parses it from them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ldcache/elf_library.h"

namespace gcr {

struct LibrariesRequest {
  std::vector<std::string> folders;
  std::vector<std::string> links;  // "<target>::<link>"
  std::string ldconfig;            // "@<host path>"
  // Host path -> soname and flags of the libraries discovery read (never written into the
  // spec: the hook reads the files).
  std::map<std::string, ElfLibrary> host_libraries;
};

}  // namespace gcr
