#include "doctor/host_programs.h"

#include <cstdlib>

#include "oci/runtime_lookup.h"

namespace gcr {

Result<std::string> program_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  return find_program(name, path != nullptr ? path : "");
}

}  // namespace gcr
