// containerd's config.toml, versions 1, 2 and 3: a CRI runtime entry for the shim (options
// copied from the current default runtime, BinaryName set, cdi.k8s.io/* annotations passed
// through), optionally the default runtime and enable_cdi. Versions 2 and 3 get a drop-in
// holding the whole CRI plugin table (containerd before 2.1 replaces plugin tables from
// imports instead of merging them) and an `imports` entry in the main file.
#include <sstream>

#include "engines/engines.h"
#include "toml/toml.h"

namespace gcr {
namespace {

constexpr const char* kCdiAnnotations = "cdi.k8s.io/*";

Result<toml::table> parse_existing(const ExistingFile& file) {
  if (!file.content) return toml::table{};
  auto table = parse_toml(*file.content, file.path);
  if (!table) return table.error().wrap("cannot parse " + file.path);
  return table;
}

std::string to_text(const toml::table& table) {
  std::ostringstream out;
  out << toml::toml_formatter(table) << "\n";
  return out.str();
}

// Missing or empty file: 2 (what containerd 1.6 writes); no version key: 1.
int version_of(const ExistingFile& file, const toml::table& config) {
  if (!file.content || config.empty()) return 2;
  return static_cast<int>(config["version"].value_or(int64_t{1}));
}

std::string cri_plugin(int version) {
  if (version <= 1) return "cri";
  if (version == 2) return "io.containerd.grpc.v1.cri";
  return "io.containerd.cri.v1.runtime";
}

toml::table& table_at(toml::table& parent, const std::string& key) {
  if (!parent[key].is_table()) parent.insert_or_assign(key, toml::table{});
  return *parent[key].as_table();
}

// The runtime whose options ours copies: the default (unless that is ours), else runc.
toml::table base_runtime(toml::table& runtimes, const std::string& default_name,
                         const std::string& ours) {
  for (const std::string& candidate : {default_name, std::string("runc")}) {
    if (candidate != ours && runtimes[candidate].is_table()) return *runtimes[candidate].as_table();
  }
  return toml::table{};
}

void add_runtime(toml::table& cri, const ConfigureOptions& o, int version) {
  toml::table& containerd = table_at(cri, "containerd");
  const std::string default_name = containerd["default_runtime_name"].value_or(std::string("runc"));
  toml::table& runtimes = table_at(containerd, "runtimes");
  toml::table ours = base_runtime(runtimes, default_name, o.runtime_name);
  if (!ours.contains("runtime_type"))
    ours.insert_or_assign("runtime_type", "io.containerd.runc.v2");
  toml::table& options = table_at(ours, "options");
  options.insert_or_assign("BinaryName", o.runtime_path);
  if (version <= 1) options.insert_or_assign("Runtime", o.runtime_path);
  if (!ours["container_annotations"].is_array())
    ours.insert_or_assign("container_annotations", toml::array{});
  toml::array& annotations = *ours["container_annotations"].as_array();
  bool present = false;
  for (const auto& a : annotations)
    present = present || a.value_or(std::string()) == kCdiAnnotations;
  if (!present) annotations.push_back(kCdiAnnotations);
  runtimes.insert_or_assign(o.runtime_name, std::move(ours));
  if (o.set_as_default) containerd.insert_or_assign("default_runtime_name", o.runtime_name);
  if (o.cdi) cri.insert_or_assign("enable_cdi", true);
}

void remove_runtime(toml::table& cri, const ConfigureOptions& o) {
  toml::table& containerd = table_at(cri, "containerd");
  if (auto* runtimes = containerd["runtimes"].as_table()) runtimes->erase(o.runtime_name);
  if (containerd["default_runtime_name"].value_or(std::string()) == o.runtime_name)
    containerd.erase("default_runtime_name");
  if (o.cdi) cri.erase("enable_cdi");
}

// The CRI plugin table as the main file has it (empty when absent).
toml::table cri_table(const toml::table& config, const std::string& plugin) {
  const auto* table = config["plugins"][plugin].as_table();
  return table != nullptr ? *table : toml::table{};
}

bool imports_contain(const toml::table& config, const std::string& path) {
  const auto* imports = config["imports"].as_array();
  if (imports == nullptr) return false;
  for (const auto& i : *imports) {
    if (i.value_or(std::string()) == path) return true;
  }
  return false;
}

std::string import_line(const std::string& path) {
  return "imports = [\"" + path + "\"]\n";
}

// The main file with our drop-in imported: a line put in front when the file has no
// `imports` (comments and layout kept), a rewrite when it has other imports.
std::optional<std::string> main_with_import(const ExistingFile& file, const toml::table& config,
                                            int version, const std::string& drop_in) {
  if (imports_contain(config, drop_in)) return std::nullopt;
  if (!config.contains("imports")) {
    const std::string versioned = file.content && config.contains("version")
                                      ? ""
                                      : "version = " + std::to_string(version) + "\n";
    return import_line(drop_in) + versioned + file.content.value_or("");
  }
  toml::table rewritten = config;
  rewritten["imports"].as_array()->push_back(drop_in);
  return to_text(rewritten);
}

std::optional<std::string> main_without_import(const ExistingFile& file, const toml::table& config,
                                               const std::string& drop_in) {
  if (!imports_contain(config, drop_in) || !file.content) return std::nullopt;
  const std::string line = import_line(drop_in);
  if (file.content->rfind(line, 0) == 0) return file.content->substr(line.size());
  toml::table rewritten = config;
  auto& imports = *rewritten["imports"].as_array();
  for (auto it = imports.begin(); it != imports.end();) {
    it = it->value_or(std::string()) == drop_in ? imports.erase(it) : it + 1;
  }
  if (imports.empty()) rewritten.erase("imports");
  return to_text(rewritten);
}

Result<std::vector<FileChange>> plan_version1(const ConfigureOptions& o, const ExistingFile& file,
                                              toml::table config) {
  const std::string before = to_text(config);
  toml::table& cri = table_at(table_at(config, "plugins"), "cri");
  if (o.remove) {
    remove_runtime(cri, o);
  } else {
    add_runtime(cri, o, 1);
  }
  const std::string text = to_text(config);
  if (text == before) return std::vector<FileChange>{};
  return std::vector<FileChange>{{file.path, text}};
}

}  // namespace

Result<std::vector<FileChange>> plan_containerd(const ConfigureOptions& o, const ExistingFile& file,
                                                const ExistingFile& drop_in) {
  auto config = parse_existing(file);
  if (!config) return config.error();
  if (auto existing = parse_existing(drop_in); !existing) return existing.error();
  const int version = version_of(file, *config);
  if (version <= 1) return plan_version1(o, file, std::move(*config));
  std::vector<FileChange> changes;
  if (o.remove) {
    if (drop_in.content) changes.push_back({drop_in.path, std::nullopt});
    if (auto main = main_without_import(file, *config, drop_in.path))
      changes.push_back({file.path, *main});
    return changes;
  }
  const std::string plugin = cri_plugin(version);
  toml::table cri = cri_table(*config, plugin);
  add_runtime(cri, o, version);
  toml::table doc;
  doc.insert_or_assign("version", int64_t{version});
  doc.insert_or_assign("plugins", toml::table{{plugin, std::move(cri)}});
  const std::string text =
      "# Written by gpu-ctk runtime configure: gpu-container-runtime as a CRI runtime.\n" +
      to_text(doc);
  if (drop_in.content != text) changes.push_back({drop_in.path, text});
  if (auto main = main_with_import(file, *config, version, drop_in.path))
    changes.push_back({file.path, *main});
  return changes;
}

}  // namespace gcr
