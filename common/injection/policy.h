// The administrator's rules applied to the merged edits, whatever the request's form (IDs,
// CDI names, annotations, volume markers): files of driver capabilities missing from
// [requests] supported-capabilities are withheld, and every hook program must be one only
// root can change.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "base/trust.h"
#include "config/config.h"
#include "edits/edits.h"
#include "log/log.h"

namespace gcr {

// Removes the mounts and device nodes that only capabilities outside `supported` bring
// (driver/files.h decides which file belongs to which), and the hooks' links to them, which
// would dangle; says what it withheld in the log.
void withhold_unsupported_capabilities(ContainerEdits& edits,
                                       const std::vector<std::string>& supported,
                                       const Logger& logger);

// Each hook's program is absolute, exists, and only root can change it or the directories on
// its path; the error names the program and why.
[[nodiscard]] Status check_hook_programs(const ContainerEdits& edits, FileTrust& trust);

}  // namespace gcr
