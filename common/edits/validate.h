// Whether container edits are safe to apply, whoever wrote them: device paths clean and under
// /dev, hook paths and mount destinations clean and absolute, env entries NAME=value, ...
#pragma once

#include <string>

#include "base/result.h"
#include "edits/edits.h"

namespace gcr {

// `where` names the edits in messages ("containerEdits").
[[nodiscard]] Status validate_edits(const ContainerEdits& edits, const std::string& where);

}  // namespace gcr
