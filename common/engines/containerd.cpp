// containerd's config.toml, versions 1 to 4: a CRI runtime entry for the shim (options
// copied from the current default runtime, BinaryName set, cdi.k8s.io/* annotations passed
// through), optionally the default runtime and enable_cdi. Versions 2 to 4 get a drop-in of the
// main file's version holding the whole CRI plugin table (containerd before 2.1 replaces plugin
// tables from imports instead of merging them) and an `imports` entry in the main file (a
// pattern its name matches, so that containerd still starts without it), unless
// one of its imports already names the drop-in (containerd 2.3's default file imports
// `/etc/containerd/conf.d/*.toml`). Version 4 (containerd 2.3) keeps version 3's CRI tables and
// moves only the server's own settings. A file whose
// shape is not containerd's (a string where a table or a list belongs) is refused, never
// overwritten, and every text written is read back and must hold exactly the data meant.
#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>

#include "base/text.h"
#include "engines/engines.h"
#include "toml/toml.h"

namespace gcr {
namespace {

constexpr const char* kCdiAnnotations = "cdi.k8s.io/*";

// Errors about the existing file name it: "<what> (<path>)".
class Shape {
 public:
  explicit Shape(std::string path) : path_(std::move(path)) {}

  // parent[key] as a table, created when absent; another type there is an error.
  [[nodiscard]] Result<toml::table*> table_at(toml::table& parent, const std::string& key,
                                              const std::string& dotted) const {
    if (!parent.contains(key)) parent.insert_or_assign(key, toml::table{});
    if (auto* table = parent[key].as_table()) return table;
    return wrong(dotted, "a table");
  }
  // parent[key] when there is one (nullptr otherwise): nothing is added.
  [[nodiscard]] Result<toml::table*> table_if_any(toml::table& parent, const std::string& key,
                                                  const std::string& dotted) const {
    if (!parent.contains(key)) return nullptr;
    return table_at(parent, key, dotted);
  }

  [[nodiscard]] Error wrong(const std::string& dotted, const std::string& expected) const {
    return Error{quote(dotted) + " must be " + expected + " (" + path_ + ")"};
  }

 private:
  std::string path_;
};

Result<toml::table> parse_existing(const ExistingFile& file) {
  if (!file.content) return toml::table{};
  auto table = parse_toml(*file.content, file.path);
  if (!table) return table.error().wrap("cannot parse " + file.path);
  return table;
}

// The text of `table`, refused unless it reads back as exactly `table` (toml++'s writer
// cannot write every key it reads, such as one holding a newline).
Result<std::string> verified_text(const toml::table& table, const std::string& path) {
  std::ostringstream out;
  out << toml::toml_formatter(table) << "\n";
  auto back = parse_toml(out.str(), path);
  if (!back || *back != table)
    return Error{"cannot write " + path + ": its keys or values cannot be written back as TOML"};
  return out.str();
}

// Missing or empty file: 2 (what containerd 1.6 writes); no version key: 1.
Result<int> version_of(const ExistingFile& file, const toml::table& config) {
  if (!file.content || config.empty()) return 2;
  if (!config.contains("version")) return 1;
  // Exactly an integer: toml++'s value<>() would read `true` as 1 and `2.0` as 2.
  const auto version = config["version"].value_exact<int64_t>();
  if (!version || *version < 1 || *version > 4)
    return Shape(file.path).wrong("version", "1, 2, 3 or 4");
  return static_cast<int>(*version);
}

// `imports`, when present, is a list of file names.
Status check_imports(const toml::table& config, const std::string& path) {
  if (!config.contains("imports")) return {};
  const auto* imports = config["imports"].as_array();
  // An empty list is a list (containerd config default writes `imports = []`); toml++ calls no
  // empty array homogeneous.
  if (imports == nullptr ||
      (!imports->empty() && !imports->is_homogeneous(toml::node_type::string)))
    return Shape(path).wrong("imports", "a list of file names");
  return {};
}

// The runtime whose options ours copies: the default (unless that is ours), else runc.
toml::table base_runtime(toml::table& runtimes, const std::string& default_name,
                         const std::string& ours) {
  for (const std::string& candidate : {default_name, std::string("runc")}) {
    if (candidate != ours && runtimes[candidate].is_table()) return *runtimes[candidate].as_table();
  }
  return toml::table{};
}

// containerd's built-in runtimes are runc alone. A file that lists none relies on it; listing ours
// alone would drop it (containerd 1.7 takes a listed map as it is, and its CRI plugin then fails
// to load: "no corresponding runtime configured in containerd.runtimes for default_runtime_name
// = \"runc\""). So runc's built-in entry is written beside ours.
toml::table builtin_runc() {
  return toml::table{{"runtime_type", "io.containerd.runc.v2"}};
}

void keep_builtin_runc(toml::table& runtimes, const std::string& ours) {
  for (const auto& entry : runtimes) {
    if (entry.first.str() != ours) return;
  }
  runtimes.insert_or_assign("runc", builtin_runc());
}

Status add_annotation(toml::table& runtime, const Shape& shape, const std::string& where) {
  if (!runtime.contains("container_annotations"))
    runtime.insert_or_assign("container_annotations", toml::array{});
  auto* annotations = runtime["container_annotations"].as_array();
  if (annotations == nullptr) return shape.wrong(where + ".container_annotations", "a list");
  for (const auto& a : *annotations) {
    if (a.value_or(std::string()) == kCdiAnnotations) return {};
  }
  annotations->push_back(kCdiAnnotations);
  return {};
}

Status add_runtime(toml::table& cri, const ConfigureOptions& o, int version, const Shape& shape,
                   const std::string& where) {
  auto containerd = shape.table_at(cri, "containerd", where + ".containerd");
  if (!containerd) return containerd.error();
  auto runtimes = shape.table_at(**containerd, "runtimes", where + ".containerd.runtimes");
  if (!runtimes) return runtimes.error();
  const std::string default_name =
      (**containerd)["default_runtime_name"].value_or(std::string("runc"));
  const std::string ours_at = where + ".containerd.runtimes." + o.runtime_name;
  keep_builtin_runc(**runtimes, o.runtime_name);
  toml::table ours = base_runtime(**runtimes, default_name, o.runtime_name);
  if (!ours.contains("runtime_type"))
    ours.insert_or_assign("runtime_type", "io.containerd.runc.v2");
  auto options = shape.table_at(ours, "options", ours_at + ".options");
  if (!options) return options.error();
  (*options)->insert_or_assign("BinaryName", o.runtime_path);
  if (version <= 1) (*options)->insert_or_assign("Runtime", o.runtime_path);
  if (auto s = add_annotation(ours, shape, ours_at); !s) return s;
  (*runtimes)->insert_or_assign(o.runtime_name, std::move(ours));
  // As NVIDIA's: without --set-as-default, a default that names this runtime goes (from an
  // earlier run, or copied from a main file an older nvidia-ctk edited in place).
  if (o.set_as_default)
    (*containerd)->insert_or_assign("default_runtime_name", o.runtime_name);
  else if (default_name == o.runtime_name)
    (*containerd)->erase("default_runtime_name");
  if (o.cdi) cri.insert_or_assign("enable_cdi", true);
  return {};
}

void remove_runtime(toml::table& cri, const ConfigureOptions& o) {
  auto* containerd = cri["containerd"].as_table();
  if (containerd == nullptr) return;
  if (auto* runtimes = (*containerd)["runtimes"].as_table()) {
    runtimes->erase(o.runtime_name);
    // The built-in runc keep_builtin_runc wrote, alone: it goes with ours.
    if (runtimes->size() == 1 && (*runtimes)["runc"].is_table() &&
        *(*runtimes)["runc"].as_table() == builtin_runc())
      runtimes->erase("runc");
    if (runtimes->empty()) containerd->erase("runtimes");
  }
  if ((*containerd)["default_runtime_name"].value_or(std::string()) == o.runtime_name)
    containerd->erase("default_runtime_name");
  if (containerd->empty()) cri.erase("containerd");
  if (o.cdi) cri.erase("enable_cdi");
}

// The CRI plugin table as the main file has it (empty when absent).
Result<toml::table> cri_table(const toml::table& config, const std::string& plugin,
                              const Shape& shape) {
  if (!config.contains("plugins")) return toml::table{};
  const auto* plugins = config["plugins"].as_table();
  if (plugins == nullptr) return shape.wrong("plugins", "a table");
  if (!plugins->contains(plugin)) return toml::table{};
  const auto* table = (*plugins)[plugin].as_table();
  if (table == nullptr) return shape.wrong("plugins." + plugin, "a table");
  return *table;
}

// Whether an import names `path` or is a pattern matching it (containerd expands an import
// with filepath.Glob, a relative one from the main file's directory; 1.6 a relative pattern
// from its working directory, which is not told here).
bool imports_contain(const toml::table& config, const std::string& main_path,
                     const std::string& path) {
  const auto* imports = config["imports"].as_array();
  if (imports == nullptr) return false;
  for (const auto& i : *imports) {
    std::string pattern = i.value_or(std::string());
    if (pattern == path) return true;
    if (pattern.empty()) continue;
    if (pattern[0] != '/') pattern = child_path(dirname_of(main_path), pattern);
    if (::fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0) return true;
  }
  return false;
}

// The `imports` entry naming our drop-in: a pattern of the names that begin as its own does and
// end in `.toml` (`*` before `.toml`; a copy named `.bak`, `.orig` or `.dpkg-old` is not one).
// containerd expands an entry holding `*` with filepath.Glob and fails to start on a plain
// entry whose file is missing, so a drop-in deleted by hand would stop it; a pattern then
// matches nothing. A relative path (containerd 1.6 expands a pattern from its working
// directory, a plain entry from the main file's), one holding pattern characters of its own, or
// one not ending in `.toml` is imported as it is.
std::string import_entry(const std::string& drop_in) {
  const std::string name = basename_of(drop_in);
  if (drop_in.empty() || drop_in.front() != '/' || !name.ends_with(".toml") || name.size() == 5 ||
      drop_in.find_first_of("*?[\\") != std::string::npos)
    return drop_in;
  return drop_in.substr(0, drop_in.size() - 5) + "*.toml";
}

// Whether `entry` is one of ours: the pattern, or the plain path earlier versions wrote.
bool is_our_import(const toml::node& entry, const std::string& drop_in) {
  const std::string text = entry.value_or(std::string());
  return text == drop_in || text == import_entry(drop_in);
}

// The imports with the plain path earlier versions imported our drop-in by (every time it is
// there) replaced by the pattern, once, where the first stood; nullopt when there is none.
std::optional<toml::array> upgraded_imports(const toml::table& config, const std::string& drop_in) {
  const auto* imports = config["imports"].as_array();
  const std::string entry = import_entry(drop_in);
  if (imports == nullptr || entry == drop_in) return std::nullopt;
  const auto is = [](const std::string& text) {
    return [text](const toml::node& n) { return n.value_or(std::string()) == text; };
  };
  if (std::none_of(imports->begin(), imports->end(), is(drop_in))) return std::nullopt;
  bool placed = std::any_of(imports->begin(), imports->end(), is(entry));
  toml::array upgraded;
  for (const auto& n : *imports) {
    if (n.value_or(std::string()) != drop_in) {
      upgraded.push_back(n.value_or(std::string()));
    } else if (!placed) {
      upgraded.push_back(entry);
      placed = true;
    }
  }
  return upgraded;
}

std::string import_line(const std::string& entry) {
  return "imports = [" + toml_string(entry) + "]\n";
}

// `imports = [...]` holding `imports`, on one line without its newline.
std::string imports_line_of(const toml::array& imports) {
  std::string line = "imports = [";
  for (const auto& i : imports) {
    if (line.back() != '[') line += ", ";
    line += toml_string(i.value_or(std::string()));
  }
  return line + "]";
}

// The line of `text` that sets `imports` whole (`imports = [...]` on one line), without its
// newline; nullopt when there is none (a list across lines is rewritten with the file).
std::optional<std::string> imports_line(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::string_view t = trim(line);
    if (t.starts_with("imports") && trim(t.substr(7)).starts_with("=") &&
        t.find('[') != std::string_view::npos && t.find(']') != std::string_view::npos)
      return line;
  }
  return std::nullopt;
}

// `text` with its line `from` (whole, at a line's start) as `to`; nullopt when it has none.
std::optional<std::string> with_line_replaced(const std::string& text, std::string_view from,
                                              std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
    if (at == 0 || text[at - 1] == '\n')
      return text.substr(0, at) + std::string(to) + text.substr(at + from.size());
  }
  return std::nullopt;
}

// `text` if it reads as `meant`, else nullopt.
std::optional<std::string> if_it_reads_as(std::optional<std::string> text, const toml::table& meant,
                                          const std::string& path) {
  if (!text) return std::nullopt;
  auto back = parse_toml(*text, path);
  if (!back || *back != meant) return std::nullopt;
  return text;
}

// `text` with its `imports` line holding `meant`'s imports, if that reads as `meant`.
std::optional<std::string> imports_edited(const std::string& text, const toml::table& meant,
                                          const std::string& path) {
  const auto line = imports_line(text);
  const auto* imports = meant["imports"].as_array();
  if (!line || imports == nullptr) return std::nullopt;
  return if_it_reads_as(with_line_replaced(text, *line, imports_line_of(*imports)), meant, path);
}

// The main file with our drop-in imported: a line put in front when the file has no
// `imports` (comments and layout kept), ours added to its `imports` otherwise. The plain path
// an earlier version imported is replaced by the pattern (`upgraded`: upgraded_imports).
Result<std::optional<std::string>> main_with_import(const ExistingFile& file,
                                                    const toml::table& config, int version,
                                                    const std::string& drop_in,
                                                    const std::optional<toml::array>& upgraded) {
  if (!upgraded && imports_contain(config, file.path, drop_in)) return std::optional<std::string>();
  const std::string entry = import_entry(drop_in);
  toml::table meant = config;
  if (!config.contains("imports")) {
    const bool versioned = file.content && config.contains("version");
    const std::string text = import_line(entry) +
                             (versioned ? "" : "version = " + std::to_string(version) + "\n") +
                             file.content.value_or("");
    meant.insert_or_assign("imports", toml::array{entry});
    if (!versioned) meant.insert_or_assign("version", int64_t{version});
    auto back = parse_toml(text, file.path);
    if (!back || *back != meant)
      return Error{"cannot write " + file.path + ": an `imports` line in front would change it"};
    return std::optional<std::string>(text);
  }
  if (upgraded) {
    meant.insert_or_assign("imports", *upgraded);
  } else {
    meant["imports"].as_array()->push_back(entry);
  }
  // Ours added to the `imports` line (`config default`'s `imports = []`, or a list of the
  // user's): comments and layout kept.
  if (auto in_place = imports_edited(*file.content, meant, file.path)) return in_place;
  auto text = verified_text(meant, file.path);
  if (!text) return text.error();
  return std::optional<std::string>(*text);
}

Result<std::optional<std::string>> main_without_import(const ExistingFile& file,
                                                       const toml::table& config,
                                                       const std::string& drop_in) {
  const auto* listed = config["imports"].as_array();
  if (listed == nullptr || !file.content ||
      std::none_of(listed->begin(), listed->end(),
                   [&](const toml::node& entry) { return is_our_import(entry, drop_in); }))
    return std::optional<std::string>();
  for (const auto& entry : {import_entry(drop_in), drop_in}) {
    const std::string line = import_line(entry);
    if (file.content->rfind(line, 0) == 0)
      return std::optional<std::string>(file.content->substr(line.size()));
  }
  toml::table rewritten = config;
  auto& imports = *rewritten["imports"].as_array();
  for (auto it = imports.begin(); it != imports.end();) {
    it = is_our_import(*it, drop_in) ? imports.erase(it) : it + 1;
  }
  // Ours taken out of the `imports` line (`imports = []` again where it was alone there).
  if (auto in_place = imports_edited(*file.content, rewritten, file.path)) return in_place;
  if (imports.empty()) rewritten.erase("imports");
  auto text = verified_text(rewritten, file.path);
  if (!text) return text.error();
  return std::optional<std::string>(*text);
}

// plugins.cri of a version 1 file, when it has one (nullptr otherwise): removing adds no table,
// so a file without ours is left as it is.
Result<toml::table*> version1_cri_if_any(toml::table& config, const Shape& shape) {
  auto plugins = shape.table_if_any(config, "plugins", "plugins");
  if (!plugins || *plugins == nullptr) return plugins;
  return shape.table_if_any(**plugins, "cri", "plugins.cri");
}

Result<std::vector<FileChange>> plan_version1(const ConfigureOptions& o, const ExistingFile& file,
                                              toml::table config) {
  const toml::table before = config;
  const Shape shape(file.path);
  if (o.remove) {
    auto cri = version1_cri_if_any(config, shape);
    if (!cri) return cri.error();
    if (*cri != nullptr) remove_runtime(**cri, o);
  } else {
    auto plugins = shape.table_at(config, "plugins", "plugins");
    if (!plugins) return plugins.error();
    auto cri = shape.table_at(**plugins, "cri", "plugins.cri");
    if (!cri) return cri.error();
    if (auto s = add_runtime(**cri, o, 1, shape, "plugins.cri"); !s) return s.error();
  }
  if (config == before) return std::vector<FileChange>{};
  auto text = verified_text(config, file.path);
  if (!text) return text.error();
  return std::vector<FileChange>{{file.path, *text}};
}

Result<std::vector<FileChange>> plan_removal(const ExistingFile& file, const toml::table& config,
                                             int version, const ExistingFile& drop_in) {
  std::vector<FileChange> changes;
  if (drop_in.content) changes.push_back({drop_in.path, std::nullopt});
  auto main = main_without_import(file, config, drop_in.path);
  if (!main) return main.error();
  // A file configure made, holding no more than what it wrote there (its `version`), goes, as
  // NVIDIA's goes: containerd reads no file as its defaults.
  const bool only_version = *main && **main == "version = " + std::to_string(version) + "\n";
  if (*main) changes.push_back({file.path, *main, true, only_version});
  return changes;
}

}  // namespace

Result<std::vector<FileChange>> plan_containerd(const ConfigureOptions& o, const ExistingFile& file,
                                                const ExistingFile& drop_in) {
  auto config = parse_existing(file);
  if (!config) return config.error();
  if (auto existing = parse_existing(drop_in); !existing) return existing.error();
  if (auto s = check_imports(*config, file.path); !s) return s.error();
  const auto version = version_of(file, *config);
  if (!version) return version.error();
  if (*version <= 1) return plan_version1(o, file, std::move(*config));
  if (o.remove) return plan_removal(file, *config, *version, drop_in);
  const Shape shape(file.path);
  const std::string plugin = containerd_cri_plugin(*version);
  auto cri = cri_table(*config, plugin, shape);
  if (!cri) return cri.error();
  if (auto s = add_runtime(*cri, o, *version, shape, "plugins." + plugin); !s) return s.error();
  toml::table doc;
  doc.insert_or_assign("version", int64_t{*version});
  doc.insert_or_assign("plugins", toml::table{{plugin, std::move(*cri)}});
  auto body = verified_text(doc, drop_in.path);
  if (!body) return body.error();
  const std::string text =
      "# Written by gpu-ctk runtime configure: gpu-container-runtime as a CRI runtime.\n" + *body;
  std::vector<FileChange> changes;
  if (drop_in.content != text) changes.push_back({drop_in.path, text});
  // Only our own entry upgraded: no backup, so that a file configure made is still told as one.
  const auto upgraded = upgraded_imports(*config, drop_in.path);
  auto main = main_with_import(file, *config, *version, drop_in.path, upgraded);
  if (!main) return main.error();
  if (*main) changes.push_back({file.path, **main, !upgraded.has_value()});
  return changes;
}

bool containerd_imports(const ExistingFile& main_config, const std::string& path) {
  auto config = parse_existing(main_config);
  if (!config) return false;
  const auto version = version_of(main_config, *config);
  return version && *version >= 2 && imports_contain(*config, main_config.path, path);
}

std::optional<std::string> containerd_cri_disabled(const ExistingFile& main_config) {
  auto config = parse_existing(main_config);
  if (!config) return std::nullopt;
  const auto* disabled = (*config)["disabled_plugins"].as_array();
  const auto version = version_of(main_config, *config);
  if (disabled == nullptr || !version) return std::nullopt;
  // A version 1 file names plugins by ID ("cri"); later versions by their full names.
  for (const auto& entry : *disabled) {
    const std::string name = entry.value_or(std::string());
    if (*version <= 1 ? name == "cri"
                      : name == "io.containerd.grpc.v1.cri" || name == containerd_cri_plugin(3))
      return name;
  }
  return std::nullopt;
}

std::string containerd_cri_plugin(int version) {
  if (version <= 1) return "cri";
  if (version == 2) return "io.containerd.grpc.v1.cri";
  return "io.containerd.cri.v1.runtime";
}

}  // namespace gcr
