#include "create.h"

#include "spec_io.h"

namespace gcr {

Status prepare_container(const RuncArgs& runc, const Config& /*config*/, const Logger& logger) {
  auto bundle = read_bundle_spec(runc.bundle);
  if (!bundle) return bundle.error();
  logger.debug("no GPU requested; " + bundle->path + " left untouched");
  return {};
}

}  // namespace gcr
