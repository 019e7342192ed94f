#include "doctor/host_programs.h"

#include <cstdlib>

#include "base/child_process.h"
#include "oci/runtime_lookup.h"

namespace gcr {

Result<std::string> program_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  return find_program(name, path != nullptr ? path : "");
}

Result<std::string> program_version(const std::string& program) {
  auto out = run_child({program, "--version"}, minimal_environment(), 10, 64 * 1024);
  if (!out) return out.error();
  if (out->exit_code != 0) return Error{program + " --version failed"};
  return out->out;
}

}  // namespace gcr
