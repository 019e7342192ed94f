#include <doctest/doctest.h>

#include "base/text.h"

TEST_CASE("path_is_under compares whole components") {
  CHECK(gcr::path_is_under("/a/b", "/a"));
  CHECK(gcr::path_is_under("/a", "/a"));
  CHECK(gcr::path_is_under("/a/b", "/a/"));
  CHECK_FALSE(gcr::path_is_under("/ab", "/a"));
  CHECK_FALSE(gcr::path_is_under("/rootfs-evil/x", "/rootfs"));
  CHECK(gcr::path_is_under("/anything", "/"));
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

TEST_CASE("printable escapes control characters and truncates") {
  CHECK(gcr::printable("a\nb\x1b[31m") == "a\\nb\\x1b[31m");
  CHECK(gcr::printable(std::string(10, 'x'), 4) == "xxxx...");
}
