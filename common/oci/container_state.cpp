#include "oci/container_state.h"

#include <unistd.h>

#include "base/fs.h"
#include "json/strict_json.h"
#include "oci/spec_io.h"
#include "oci/spec_view.h"

namespace gcr {

Result<ContainerState> parse_container_state(const std::string& text) {
  auto doc = parse_json_strict(text);
  if (!doc) return Error{"invalid container state: " + doc.error().message};
  if (!doc->is_object()) return Error{"invalid container state: not a JSON object"};
  ContainerState state;
  for (const char* key : {"bundle", "bundlePath"}) {
    const auto it = doc->find(key);
    if (it != doc->end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
      state.bundle = it->get<std::string>();
      break;
    }
  }
  if (state.bundle.empty()) return Error{"invalid container state: no bundle"};
  const auto root = doc->find("root");
  if (root != doc->end() && root->is_string() && !root->get_ref<const std::string&>().empty()) {
    state.root = root->get<std::string>();
  }
  return state;
}

Result<std::string> container_rootfs(const ContainerState& state) {
  if (state.root) return *state.root;
  auto bundle = read_bundle_spec(state.bundle);
  if (!bundle) return bundle.error();
  return container_rootfs(state, *bundle);
}

Result<std::string> container_rootfs(const ContainerState& state, const BundleSpec& bundle) {
  if (state.root) return *state.root;
  auto view = view_spec(bundle.spec);
  if (!view) return Error{view.error().message + " (" + bundle.path + ")"};
  if (view->root_path.empty())
    return Error{"the container spec has no root.path (" + bundle.path + ")"};
  if (view->root_path.front() == '/') return view->root_path;
  return state.bundle + "/" + view->root_path;
}

Result<ContainerState> read_container_state_from_stdin() {
  auto text = read_fd(STDIN_FILENO, kMaxStateBytes);
  if (!text) return Error{"cannot read the container state from stdin: " + text.error().message};
  return parse_container_state(*text);
}

}  // namespace gcr
