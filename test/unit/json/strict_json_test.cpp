#include <doctest/doctest.h>

#include <string>

#include "json/strict_json.h"

namespace {

std::string rejection(const std::string& text) {
  auto r = gcr::parse_json_strict(text);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("duplicate keys are refused at any depth") {
  CHECK(rejection(R"({"a": 1, "a": 2})") == "duplicate key `a`");
  CHECK(rejection(R"({"process": {"env": [], "env": ["X=1"]}})") == "duplicate key `env`");
  CHECK(rejection(R"({"m": [{"k": 1}, {"k": 1, "k": 2}]})") == "duplicate key `k`");
  CHECK(gcr::parse_json_strict(R"({"m": [{"k": 1}, {"k": 2}], "k": 3})").ok());
}

TEST_CASE("trailing data, BOM, emptiness and broken documents are refused") {
  CHECK(rejection(R"({"a": 1}{"b": 2})").find("not valid JSON") == 0);
  CHECK(rejection(R"({"a": 1} junk)").find("not valid JSON") == 0);
  CHECK(rejection("\xEF\xBB\xBF{}") == "starts with a UTF-8 byte-order mark");
  CHECK(rejection("") == "is empty");
  CHECK(rejection("  \n") == "is empty");
  CHECK(rejection(R"({"a": )").find("not valid JSON") == 0);
  CHECK(rejection("{\"a\": \"\xff\"}").find("not valid JSON") == 0);
  CHECK(rejection(R"({"a": "\ud800"})").find("not valid JSON") == 0);
  CHECK(rejection(R"({"a": /* c */ 1})").find("not valid JSON") == 0);
}

TEST_CASE("NUL inside strings and keys is refused") {
  CHECK(rejection(R"({"a": "x\u0000y"})") == "a string contains a NUL character");
  CHECK(rejection(R"({"a\u0000": 1})") == "a key contains a NUL character");
}

TEST_CASE("nesting is capped") {
  std::string deep(300, '[');
  deep += std::string(300, ']');
  CHECK(rejection(deep) == "nesting deeper than 256 levels");
  std::string ok(200, '[');
  ok += std::string(200, ']');
  CHECK(gcr::parse_json_strict(ok).ok());
}

TEST_CASE("extreme integers and key order survive a round trip") {
  const std::string text =
      R"({"z":18446744073709551615,"a":-9223372036854775808,"m":{"y":1,"b":2.5}})";
  auto r = gcr::parse_json_strict(text);
  REQUIRE(r.ok());
  CHECK(r->dump() == text);
}
