#include <doctest/doctest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/spec_io.h"
#include "test_support.h"

using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

std::string read_error(const std::string& bundle) {
  auto r = gcr::read_bundle_spec(bundle);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("round trip keeps unknown fields, key order and extreme integers") {
  TempDir dir;
  const std::string text =
      R"({"ociVersion":"1.0.2","zzz-unknown":{"b":1,"a":2},"process":{"user":{"uid":4294967295},"rlimits":[{"type":"RLIMIT_X","hard":18446744073709551615,"soft":-9223372036854775808}]},"linux":{"future":[1,2,3]}})";
  write_file(dir / "config.json", text, 0640);
  auto bundle = gcr::read_bundle_spec(dir.path());
  REQUIRE(bundle.ok());
  REQUIRE(gcr::write_bundle_spec(*bundle, bundle->spec).ok());
  auto again = gcr::parse_json_strict(gcr::test::read_file(dir / "config.json"));
  REQUIRE(again.ok());
  CHECK(again->dump() == text);
  struct stat st {};
  REQUIRE(::stat((dir / "config.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("the write is atomic and leaves no temporary file behind") {
  TempDir dir;
  write_file(dir / "config.json", R"({"a":1})");
  struct stat before {};
  REQUIRE(::stat((dir / "config.json").c_str(), &before) == 0);
  auto bundle = gcr::read_bundle_spec(dir.path());
  REQUIRE(bundle.ok());
  gcr::Json edited = bundle->spec;
  edited["b"] = 2;
  REQUIRE(gcr::write_bundle_spec(*bundle, edited).ok());
  struct stat after {};
  REQUIRE(::stat((dir / "config.json").c_str(), &after) == 0);
  CHECK(before.st_ino != after.st_ino);
  auto files = gcr::test::run({"/bin/ls", "-A", dir.path()});
  CHECK(files.out == "config.json\n");
}

TEST_CASE("a failed write (no space left) keeps the original bytes and no temp file") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "needs root to mount a small tmpfs");
  TempDir dir;
  REQUIRE(::mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=64k") == 0);
  write_file(dir / "config.json", R"({"a":1})");
  auto bundle = gcr::read_bundle_spec(dir.path());
  REQUIRE(bundle.ok());
  gcr::Json big = gcr::Json::object();
  big["pad"] = std::string(200 * 1024, 'x');
  const auto status = gcr::write_bundle_spec(*bundle, big);
  CHECK_FALSE(status.ok());
  CHECK(gcr::test::read_file(dir / "config.json") == R"({"a":1})");
  CHECK(gcr::test::run({"/bin/ls", "-A", dir.path()}).out == "config.json\n");
  bundle = gcr::Result<gcr::BundleSpec>(gcr::Error{"released"});
  ::umount2(dir.path().c_str(), MNT_DETACH);
}

TEST_CASE("config.json must be a regular file") {
  TempDir dir;
  write_file(dir / "real.json", "{}");
  gcr::test::make_symlink(dir / "real.json", dir / "link/config.json");
  CHECK(read_error(dir / "link").find("is a symbolic link") != std::string::npos);
  gcr::test::make_dirs(dir / "fifo");
  REQUIRE(::mkfifo((dir / "fifo/config.json").c_str(), 0644) == 0);
  CHECK(read_error(dir / "fifo").find("is not a regular file") != std::string::npos);
  gcr::test::make_dirs(dir / "dir/config.json");
  CHECK(read_error(dir / "dir").find("is not a regular file") != std::string::npos);
  CHECK(read_error(dir / "absent").find("bundle directory") != std::string::npos);
}

TEST_CASE("bad documents are refused with the path named") {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {"", "is empty"},
      {"null", "the top level is not a JSON object"},
      {"[]", "the top level is not a JSON object"},
      {"\"spec\"", "the top level is not a JSON object"},
      {R"({"process":{}, "process":{}})", "duplicate key `process`"},
      {R"({"a":1} {"b":2})", "not valid JSON"},
      {"\xEF\xBB\xBF{}", "byte-order mark"},
      {"{\"a\":\"\xc3\x28\"}", "not valid JSON"},
  };
  for (const auto& entry : cases) {
    const auto& text = entry.first;  // named: doctest's CAPTURE cannot take a binding
    const auto& expected = entry.second;
    CAPTURE(text);
    write_file(dir / "config.json", text);
    const std::string message = read_error(dir.path());
    CHECK(message.find(expected) != std::string::npos);
    CHECK(message.find(dir / "config.json") != std::string::npos);
  }
}

TEST_CASE("files over 64 MiB are refused without reading them") {
  TempDir dir;
  write_file(dir / "config.json", "{}");
  REQUIRE(::truncate((dir / "config.json").c_str(), (64 << 20) + 1) == 0);
  CHECK(read_error(dir.path()).find("larger than 67108864 bytes") != std::string::npos);
}
