#include "cdi_fixture.h"

#include <stdexcept>

namespace gcr::test {

CdiFixture::CdiFixture(const Json& extra_config) : GpuFixture({}, extra_config) {
  make_dirs(spec_dir);
  const auto r = ctk({"cdi", "generate", "--output", spec_dir + "/nvidia.yaml"});
  if (r.exit_code != 0) throw std::runtime_error("gpu-ctk cdi generate failed: " + r.err);
  Json config = extra_config;
  config.merge_patch({{"cdi", {{"spec-dirs", {spec_dir}}}}});
  configure(config);
}

ProcessResult CdiFixture::ctk(std::vector<std::string> args) const {
  args.insert(args.begin(), built("gpu-ctk"));
  RunOptions options;
  options.env["GPU_CONTAINER_RUNTIME_CONFIG"] = config_path();
  return run(args, options);
}

}  // namespace gcr::test
