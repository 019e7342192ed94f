// The update-libraries hook's work done while the shim handles `create` (hooks/
// libraries_at_create.h says when that gives the hook's result): the container then starts
// without the hook, one process and runc's handling of it less.
#pragma once

#include <string>

#include "config/config.h"
#include "json/strict_json.h"
#include "log/log.h"

namespace gcr {

// Does the work of the update-libraries hook `spec` holds and removes the hook; leaves the spec
// as it is, saying why at debug level, when the work must wait for the hook. `bundle` as runc
// was given it ("" is the working directory).
void run_library_hook_at_create(Json& spec, const std::string& bundle, const Config& config,
                                const Logger& logger);

}  // namespace gcr
