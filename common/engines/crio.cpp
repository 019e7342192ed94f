// CRI-O: a drop-in under crio.conf.d with the runtime handler (and the default, if asked). The
// handler is a copy of the one CRI-O would run otherwise (its default, else runc, else crun, as
// the files read before say: crio.conf, then crio.conf.d in name order), with runtime_path and
// runtime_type set, as NVIDIA's is: a packaged CRI-O (pkgs.k8s.io) keeps conmon in
// /usr/libexec/crio and names it only in its handlers' monitor_path, and a handler without one
// stops CRI-O ("failed to translate monitor fields ... conmon not found in $PATH").
#include <sstream>

#include "engines/engines.h"
#include "toml/toml.h"

namespace gcr {
namespace {

constexpr const char* kHeader =
    "# Written by gpu-ctk runtime configure: gpu-container-runtime as a CRI-O runtime handler,\n"
    "# a copy of the handler CRI-O ran before (its monitor and root kept).\n";

// The handlers of CRI-O's files merged key by key in the order read, and the last
// default_runtime named. A file that does not parse is an error naming it (CRI-O would not
// start with it either).
struct CrioRuntimes {
  toml::table handlers;
  std::string default_name = "crun";  // CRI-O's own default since 1.31 (before: runc)
};

Result<CrioRuntimes> runtimes_of(const std::vector<ExistingFile>& sources) {
  CrioRuntimes out;
  for (const auto& file : sources) {
    if (!file.content) continue;
    auto config = parse_toml(*file.content, file.path);
    if (!config) return config.error().wrap("cannot parse " + file.path);
    const auto runtime = (*config)["crio"]["runtime"];
    if (const auto name = runtime["default_runtime"].value<std::string>()) out.default_name = *name;
    const auto* handlers = runtime["runtimes"].as_table();
    if (handlers == nullptr) continue;
    for (const auto& [name, handler] : *handlers) {
      const auto* keys = handler.as_table();
      if (keys == nullptr) continue;
      if (!out.handlers.contains(name.str())) out.handlers.insert(name.str(), toml::table{});
      auto* merged = out.handlers[name.str()].as_table();
      for (const auto& [key, value] : *keys) merged->insert_or_assign(key, value);
    }
  }
  return out;
}

// The copy leaves out what would make CRI-O run another program than ours: the handler's
// programs per platform, and inheriting the default handler's settings (its path among them).
toml::table base_handler(const CrioRuntimes& runtimes, const std::string& ours) {
  for (const std::string& name :
       {runtimes.default_name, std::string("runc"), std::string("crun")}) {
    if (name == ours) continue;
    if (const auto* handler = runtimes.handlers[name].as_table()) {
      toml::table copy = *handler;
      for (const char* key : {"platform_runtime_paths", "inherit_default_runtime"}) copy.erase(key);
      return copy;
    }
  }
  return toml::table{};
}

// The drop-in's text, refused unless it reads back as exactly what was meant.
Result<std::string> drop_in_text(const ConfigureOptions& o, toml::table handler,
                                 const std::string& path) {
  handler.insert_or_assign("runtime_path", o.runtime_path);
  handler.insert_or_assign("runtime_type", "oci");
  toml::table runtime{{"runtimes", toml::table{{o.runtime_name, std::move(handler)}}}};
  if (o.set_as_default) runtime.insert_or_assign("default_runtime", o.runtime_name);
  const toml::table meant{{"crio", toml::table{{"runtime", std::move(runtime)}}}};
  std::ostringstream out;
  out << kHeader << toml::toml_formatter(meant) << "\n";
  auto back = parse_toml(out.str(), path);
  if (!back || *back != meant)
    return Error{"cannot write " + path + ": the runtime path cannot be written as TOML"};
  return out.str();
}

}  // namespace

Result<std::vector<FileChange>> plan_crio(const ConfigureOptions& options,
                                          const ExistingFile& drop_in,
                                          const ExistingFile& old_backup,
                                          const std::vector<ExistingFile>& sources) {
  // CRI-O reads every file of crio.conf.d: the drop-in (ours, whole) is rewritten without a
  // backup beside it, and one an earlier version left there goes.
  std::vector<FileChange> changes;
  if (old_backup.content) changes.push_back({old_backup.path, std::nullopt});
  if (options.remove) {
    if (drop_in.content) changes.push_back({drop_in.path, std::nullopt});
    return changes;
  }
  auto runtimes = runtimes_of(sources);
  if (!runtimes) return runtimes.error();
  auto text = drop_in_text(options, base_handler(*runtimes, options.runtime_name), drop_in.path);
  if (!text) return text.error();
  if (drop_in.content != *text) changes.push_back({drop_in.path, *text, false});
  return changes;
}

}  // namespace gcr
