#include <doctest/doctest.h>

#include <string_view>
#include <vector>

#include "base/text.h"

TEST_CASE("path_is_under compares whole components") {
  CHECK(gcr::path_is_under("/a/b", "/a"));
  CHECK(gcr::path_is_under("/a", "/a"));
  CHECK(gcr::path_is_under("/a/b", "/a/"));
  CHECK_FALSE(gcr::path_is_under("/ab", "/a"));
  CHECK_FALSE(gcr::path_is_under("/rootfs-evil/x", "/rootfs"));
  CHECK(gcr::path_is_under("/anything", "/"));
}

TEST_CASE("split keeps every part, empty ones too, and takes one block for them") {
  using Parts = std::vector<std::string_view>;
  using namespace std::string_view_literals;
  CHECK(gcr::split("compute,utility"sv, ',') == Parts{"compute", "utility"});
  CHECK(gcr::split(""sv, ',') == Parts{""});
  CHECK(gcr::split(",a,,"sv, ',') == Parts{"", "a", "", ""});
  CHECK(gcr::split("/usr/lib"sv, '/') == Parts{"", "usr", "lib"});
  const auto parts = gcr::split("a.b.c.d.e.f.g.h.i"sv, '.');
  CHECK(parts.size() == 9);
  CHECK(parts.capacity() == 9);  // sized once, not grown part by part
}

TEST_CASE("clean_path") {
  CHECK(gcr::clean_path("/a//b/./c/") == "/a/b/c");
  CHECK(gcr::clean_path("/a/../../b") == "/b");
  CHECK(gcr::clean_path("/") == "/");
  CHECK(gcr::clean_path("a/../..") == "..");
  CHECK(gcr::clean_path("") == ".");
  // Paths already clean come back as they are; the others are cleaned.
  for (const char* same : {"/usr/lib/x86_64-linux-gnu", "a/b", "a", ".", "/", "..", "../a"})
    CHECK(gcr::clean_path(same) == same);
  CHECK(gcr::clean_path("/a/..") == "/");
  CHECK(gcr::clean_path("/a/.") == "/a");
  CHECK(gcr::clean_path("./a") == "a");
  CHECK(gcr::clean_path("a/") == "a");
  CHECK(gcr::clean_path("//a") == "/a");
}

TEST_CASE("a path's directory, name and children") {
  CHECK(gcr::dirname_of("/a/b") == "/a");
  CHECK(gcr::dirname_of("/a") == "/");
  CHECK(gcr::dirname_of("a") == ".");
  CHECK(gcr::dirname_view("/a/b") == "/a");
  CHECK(gcr::dirname_view("/a") == "/");
  CHECK(gcr::dirname_view("a") == ".");
  CHECK(gcr::basename_of("/a/b") == "b");
  CHECK(gcr::basename_of("b") == "b");
  CHECK(gcr::child_path("/a", "b") == "/a/b");
  CHECK(gcr::child_path("/", "b") == "/b");
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  const std::string name = "libnvidia-ptxjitcompiler.so.535.261.03";
  const std::string path = gcr::child_path(dir, name);
  CHECK(path == dir + "/" + name);
  CHECK(path.capacity() < path.size() + 16);  // sized once, not grown by each part
}

TEST_CASE("parse_decimal accepts only plain unsigned decimals") {
  CHECK(gcr::parse_decimal("0") == 0u);
  CHECK(gcr::parse_decimal("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(gcr::parse_decimal("18446744073709551616"));
  CHECK_FALSE(gcr::parse_decimal("-1"));
  CHECK_FALSE(gcr::parse_decimal("+1"));
  CHECK_FALSE(gcr::parse_decimal(" 1"));
  CHECK_FALSE(gcr::parse_decimal("0x1"));
  CHECK_FALSE(gcr::parse_decimal(""));
}

TEST_CASE("parse_go_unsigned reads Go's base-0 integers") {
  CHECK(gcr::parse_go_unsigned("0") == 0u);
  CHECK(gcr::parse_go_unsigned("10") == 10u);
  CHECK(gcr::parse_go_unsigned("010") == 8u);
  CHECK(gcr::parse_go_unsigned("0o17") == 15u);
  CHECK(gcr::parse_go_unsigned("0x1F") == 31u);
  CHECK(gcr::parse_go_unsigned("0b101") == 5u);
  CHECK(gcr::parse_go_unsigned("1_000") == 1000u);
  CHECK(gcr::parse_go_unsigned("0x_ff") == 255u);
  CHECK(gcr::parse_go_unsigned("0xFFFFFFFFFFFFFFFF") == UINT64_MAX);
  for (const char* bad : {"", "0x", "08", "0b2", "_1", "1_", "1__0", "+1", "-1", " 1",
                          "0x10000000000000000", "18446744073709551616", "1e3"}) {
    CAPTURE(bad);
    CHECK_FALSE(gcr::parse_go_unsigned(bad));
  }
}

TEST_CASE("printable escapes control characters and truncates") {
  CHECK(gcr::printable("a\nb\x1b[31m") == "a\\nb\\x1b[31m");
  CHECK(gcr::printable(std::string(10, 'x'), 4) == "xxxx...");
}
