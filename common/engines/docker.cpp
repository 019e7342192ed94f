// Docker's daemon.json: runtimes.<name>.path (+ runtimeArgs), default-runtime, features.cdi.
#include "base/text.h"
#include "engines/engines.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

void erase_if_empty(Json& parent, const char* key) {
  const auto it = parent.find(key);
  if (it != parent.end() && it->is_object() && it->empty()) parent.erase(it);
}

// The shape dockerd reads: `key`, when present, is an object (`want_string`: a string).
Status require_shape(const Json& doc, const char* key, bool want_string, const std::string& path) {
  const auto it = doc.find(key);
  if (it == doc.end() || (want_string ? it->is_string() : it->is_object())) return {};
  return Error{quote(key) + (want_string ? " is not a string (" : " is not an object (") + path +
               ")"};
}

void add(Json& doc, const ConfigureOptions& o) {
  Json runtime = {{"path", o.runtime_path}};
  if (!o.runtime_args.empty()) runtime["runtimeArgs"] = o.runtime_args;
  doc["runtimes"][o.runtime_name] = runtime;
  if (o.set_as_default) doc["default-runtime"] = o.runtime_name;
  if (o.cdi) doc["features"]["cdi"] = true;
}

void remove(Json& doc, const ConfigureOptions& o) {
  if (doc.contains("runtimes")) doc["runtimes"].erase(o.runtime_name);
  erase_if_empty(doc, "runtimes");
  if (doc.value("default-runtime", "") == o.runtime_name) doc.erase("default-runtime");
  if (o.cdi && doc.contains("features")) doc["features"].erase("cdi");
  erase_if_empty(doc, "features");
}

}  // namespace

Result<std::vector<FileChange>> plan_docker(const ConfigureOptions& options,
                                            const ExistingFile& daemon_json) {
  Json doc = Json::object();
  const bool had_content = daemon_json.content && !daemon_json.content->empty();
  if (had_content) {
    auto parsed = parse_json_strict(*daemon_json.content);
    if (!parsed) return Error{"cannot parse " + daemon_json.path + ": " + parsed.error().message};
    if (!parsed->is_object()) return Error{daemon_json.path + " is not a JSON object"};
    doc = std::move(*parsed);
  }
  for (const char* key : {"runtimes", "features"}) {
    if (auto s = require_shape(doc, key, false, daemon_json.path); !s) return s.error();
  }
  if (auto s = require_shape(doc, "default-runtime", true, daemon_json.path); !s) return s.error();
  const Json before = doc;
  if (options.remove) {
    remove(doc, options);
  } else {
    add(doc, options);
  }
  if (doc == before) return std::vector<FileChange>{};
  const std::string text = json_text(doc, 4) + "\n";
  auto back = parse_json_strict(text);
  if (!back || *back != doc)
    return Error{"cannot write " + daemon_json.path + ": it would not read back as written"};
  // Nothing left: a file configure made goes, as NVIDIA's does.
  return std::vector<FileChange>{{daemon_json.path, text, true, options.remove && doc.empty()}};
}

}  // namespace gcr
