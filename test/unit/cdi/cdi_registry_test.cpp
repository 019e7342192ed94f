// Spec directories: priority, conflicts, trust, bad files, and the merge order of edits.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "cdi/registry.h"
#include "test_support.h"

using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

std::string spec(const std::string& kind,
                 const std::vector<std::pair<std::string, std::string>>& devices,
                 const std::string& global_env = "") {
  std::string out = R"({"cdiVersion":"0.5.0","kind":")" + kind + R"(","devices":[)";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    out += std::string(i ? "," : "") + R"({"name":")" + devices[i].first +
           R"(","containerEdits":{"env":[")" + devices[i].second + R"("]}})";
  }
  out += "]";
  if (!global_env.empty()) out += R"(,"containerEdits":{"env":[")" + global_env + R"("]})";
  return out + "}";
}

std::vector<std::string> env_of(const gcr::CdiRegistry& registry,
                                const std::vector<std::string>& names) {
  auto edits = gcr::cdi_edits_for(registry, names);
  REQUIRE(edits.ok());
  return edits->env;
}

bool has_error(const gcr::CdiRegistry& r, const std::string& text) {
  for (const auto& e : r.errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("later directories win; files in one directory merge per kind") {
  TempDir t;
  write_file(t / "etc/a.json", spec("vendor.com/dev", {{"x", "X=etc"}, {"y", "Y=etc"}}));
  write_file(t / "run/b.yaml",
             "cdiVersion: 0.5.0\nkind: vendor.com/dev\ndevices:\n  - name: x\n    "
             "containerEdits:\n      env: [X=run]\n");
  write_file(t / "run/c.json", spec("vendor.com/dev", {{"z", "Z=run"}}));
  const auto r = gcr::load_cdi_registry({t / "etc", t / "run", t / "missing"});
  CHECK(r.errors.empty());
  CHECK(env_of(r, {"vendor.com/dev=x"}) == std::vector<std::string>{"X=run"});
  CHECK(env_of(r, {"vendor.com/dev=y", "vendor.com/dev=z"}) ==
        std::vector<std::string>{"Y=etc", "Z=run"});
}

TEST_CASE("equal-priority duplicates are conflicts: dropped, both files named") {
  TempDir t;
  write_file(t / "d/a.json", spec("vendor.com/dev", {{"x", "X=a"}, {"ok", "OK=1"}}));
  write_file(t / "d/b.json", spec("vendor.com/dev", {{"x", "X=b"}}));
  const auto r = gcr::load_cdi_registry({t / "d"});
  CHECK(r.devices.count("vendor.com/dev=x") == 0);
  CHECK(r.devices.count("vendor.com/dev=ok") == 1);
  CHECK(has_error(r, t / "d/b.json: conflicting device vendor.com/dev=x"));
  CHECK(has_error(r, t / "d/a.json: conflicting device vendor.com/dev=x"));
}

TEST_CASE("one bad file does not hide the others; only .json and .yaml are read") {
  TempDir t;
  write_file(t / "d/0-bad.json", "{not json");
  write_file(t / "d/1-invalid.yaml", "cdiVersion: 0.5.0\nkind: x/y\ndevices: []\n");
  write_file(t / "d/2-good.json", spec("vendor.com/dev", {{"x", "X=1"}}));
  write_file(t / "d/3-ignored.yml", spec("vendor.com/dev", {{"y", "Y=1"}}));
  write_file(t / "d/4-big.json", std::string(5u << 20, ' '));
  // As the CDI library reads them: a link is followed (judged by the file it leads to), a
  // folder is no spec, and a file's text is read whichever form its name says.
  write_file(t / "other/z.json", spec("vendor.com/dev", {{"z", "Z=1"}}));
  gcr::test::make_symlink(t / "other/z.json", t / "d/5-link.json");
  gcr::test::make_dirs(t / "d/6-folder.yaml");
  write_file(t / "d/7-yaml-text.json",
             "cdiVersion: 0.5.0\nkind: vendor.com/dev\ndevices:\n"
             "  - {name: \"y\", containerEdits: {env: [\"Y=1\"]}}\n");
  const auto r = gcr::load_cdi_registry({t / "d"});
  CHECK(r.devices.size() == 3);
  CHECK(r.devices.count("vendor.com/dev=z") == 1);
  CHECK(r.devices.count("vendor.com/dev=y") == 1);
  CHECK(has_error(r, "0-bad.json: not valid JSON"));
  CHECK(has_error(r, "1-invalid.yaml: invalid spec, no devices"));
  CHECK(has_error(r, "4-big.json: larger than 4194304 bytes"));
  CHECK(r.errors.size() == 3);
}

TEST_CASE("trust: group/other-writable or non-root files and directories are refused") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "chown needs root");
  TempDir t;
  write_file(t / "d/writable.json", spec("vendor.com/dev", {{"w", "W=1"}}), 0664);
  write_file(t / "d/owned.json", spec("vendor.com/dev", {{"o", "O=1"}}));
  REQUIRE(::chown((t / "d/owned.json").c_str(), 1000, 1000) == 0);
  write_file(t / "open/x.json", spec("vendor.com/dev", {{"x", "X=1"}}));
  ::chmod((t / "open").c_str(), 0777);
  // A link is judged by the file it leads to.
  write_file(t / "user/l.json", spec("vendor.com/dev", {{"l", "L=1"}}));
  REQUIRE(::chown((t / "user/l.json").c_str(), 1000, 1000) == 0);
  gcr::test::make_symlink(t / "user/l.json", t / "d/link.json");
  // And by the folders it leads through: whoever may write one picks the file read.
  write_file(t / "shared/s.json", spec("vendor.com/dev", {{"s", "S=1"}}));
  ::chmod((t / "shared").c_str(), 0777);
  gcr::test::make_symlink(t / "shared/s.json", t / "d/shared.json");
  const auto r = gcr::load_cdi_registry({t / "d", t / "open"});
  CHECK(r.devices.empty());
  CHECK(has_error(r, "writable.json: writable by group or others"));
  CHECK(has_error(r, "owned.json: not owned by root"));
  CHECK(has_error(r, "link.json: not owned by root"));
  CHECK(has_error(r, "shared.json: the folder of " + t / "shared/s.json"));
  CHECK(has_error(r, t / "open: refused: writable by group or others"));
}

TEST_CASE(
    "merge order: each spec's global edits once, before its first device; unresolved fails all") {
  TempDir t;
  write_file(t / "d/a.json", spec("a.com/x", {{"1", "A1=1"}, {"2", "A2=1"}}, "A_GLOBAL=1"));
  write_file(t / "d/b.json", spec("b.com/y", {{"1", "B1=1"}}, "B_GLOBAL=1"));
  const auto r = gcr::load_cdi_registry({t / "d"});
  CHECK(env_of(r, {"a.com/x=1", "b.com/y=1", "a.com/x=2"}) ==
        std::vector<std::string>{"A_GLOBAL=1", "A1=1", "B_GLOBAL=1", "B1=1", "A2=1"});
  auto missing = gcr::cdi_edits_for(r, {"a.com/x=1", "a.com/x=9", "c.com/z=0"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "unresolvable CDI devices a.com/x=9, c.com/z=0");
}
