#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "toml/toml.h"

namespace {

std::string toml_refusal(const std::string& text) {
  auto r = gcr::parse_toml(text, "t.toml");
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("what toml++ 3.3.0 may not survive is refused before it reads the text") {
  std::string deep = "a = ";
  for (int i = 0; i < 100000; ++i) deep += "[";
  CHECK(toml_refusal(deep) == "invalid TOML at line 1: nesting deeper than 64 levels");
  std::string dotted = "a";
  for (int i = 0; i < 1000; ++i) dotted += ".a";
  CHECK(toml_refusal(dotted + " = 1\n") == "invalid TOML at line 1: a key of more than 64 parts");
  CHECK(toml_refusal("\x0c= 1\n") == "invalid TOML at line 1: a control character");
  CHECK(toml_refusal("[\xe2\x82\xac]\n") ==
        "invalid TOML at line 1: a non-ASCII character outside a string or comment");
  CHECK(toml_refusal("a = \"\xff\"\n") == "invalid TOML at line 1: invalid UTF-8");
  CHECK(toml_refusal("a = 1\nb = \"x\x01y\"\n") == "invalid TOML at line 2: a control character");
}

TEST_CASE("valid documents pass the checks: strings, comments, floats, arrays, tables") {
  const std::string text = R"(# a comment with € and "quotes" [[[
title = "é [not a table] \" # still a string"
lit = 'C:\path{'
multi = """
a "quoted" line ]]]
"""
multilit = '''
{{{ '''
floats = [1.5, 2.5, 3.25, 1e3]
nested = [[1, 2], [3, [4, [5]]]]
inline = { a = { b = { c = 1 } } }
[a.b.c]
d = 1979-05-27T07:32:00Z
[[x.y]]
z = true
)";
  auto r = gcr::parse_toml(text, "t.toml");
  REQUIRE(r.ok());
  CHECK((*r)["title"].value_or(std::string()) == "é [not a table] \" # still a string");
  CHECK((*r)["inline"]["a"]["b"]["c"].value_or(0) == 1);
  const gcr::Json json = gcr::toml_to_json(*r);
  CHECK(json["nested"][1][1][1][0] == 5);
  CHECK(json["a"]["b"]["c"]["d"].is_null());  // dates have no JSON form
}

TEST_CASE("comments are checked, then not handed to toml++; what is not a comment is kept") {
  const std::string text =
      "# a comment\n"
      "a = \"# not a comment\" # a comment\n"
      "b = '''\n# a line of a string\n''' # a comment\n"
      "c = [ # a comment\n  1, # a comment\n  2,\n]\n"
      "[t] # a comment\n"
      "d = 1\n";
  auto r = gcr::parse_toml(text, "t.toml");
  REQUIRE(r.ok());
  CHECK((*r)["a"].value_or(std::string()) == "# not a comment");
  CHECK((*r)["b"].value_or(std::string()) == "# a line of a string\n");
  CHECK(gcr::toml_to_json(*r)["c"] == gcr::Json::array({1, 2}));
  CHECK((*r)["t"]["d"].value_or(0) == 1);
  // Still refused in a comment: a control character, invalid UTF-8.
  CHECK(toml_refusal("a = 1 # x\x01y\n") == "invalid TOML at line 1: a control character");
  CHECK(toml_refusal("# \xff\n") == "invalid TOML at line 1: invalid UTF-8");
  CHECK(toml_refusal("# a\rb\n") ==
        "invalid TOML at line 1: a carriage return without a line feed");
  CHECK(toml_refusal("a = 1 # c\r") ==
        "invalid TOML at line 1: a carriage return without a line feed");
  auto crlf = gcr::parse_toml("a = 1 # c\r\nb = 2\r\n", "t.toml");
  REQUIRE(crlf.ok());
  CHECK((*crlf)["b"].value_or(0) == 2);
  // toml++'s messages keep their line numbers past removed comments.
  CHECK(toml_refusal("# one\n# two\na = 1 # three\nb = = 2\n")
            .starts_with("invalid TOML at line 4: "));
}

TEST_CASE("toml_string writes what reads back") {
  for (const std::string value :
       {"plain", "with \"quotes\" and \\ back", "new\nline\ttab\x01", "unicode é €"}) {
    CAPTURE(value);
    auto r = gcr::parse_toml("v = " + gcr::toml_string(value) + "\n", "t.toml");
    REQUIRE(r.ok());
    CHECK((*r)["v"].value_or(std::string()) == value);
  }
}

TEST_CASE("toml++'s own assumptions about the input are checks, not undefined behaviour") {
  for (const char* text : {"[.di]\n", "[ .a]\n", "[[.a]]\n"}) {
    CAPTURE(text);
    CHECK(toml_refusal(text) == "invalid TOML: not a document toml++ can read safely");
  }
}

TEST_CASE("non-ASCII text where toml++ asks whether it is whitespace is read, not a crash") {
  // After a multi-line string's line-ending backslash: the string continues at the 'é'.
  const std::pair<std::string, std::string> cases[] = {
      {"a = \"\"\"\\\n  \xc3\xa9\"\"\"\n", "\xc3\xa9"},
      {"a = \"\"\"\\ \n\xd0\x96\"\"\"\n", "\xd0\x96"},
      {"a = \"\"\"\\\n\xe3\x81\x81\"\"\"\n", "\xe3\x81\x81"},
      {"a = \"\"\"\\\n\xef\xac\xb0\"\"\"\n", "\xef\xac\xb0"}};
  for (const auto& one : cases) {
    const std::string& text = one.first;  // not a structured binding: CAPTURE cannot take one
    const auto& value = one.second;
    CAPTURE(text);
    auto r = gcr::parse_toml(text, "t.toml");
    REQUIRE(r.ok());
    CHECK((*r)["a"].value_or(std::string()) == value);
  }
  // Right after a value (a number running into a string, a boolean): an error, not a crash.
  for (const std::string text :
       {"a =0\"\"\"\\e\xc3\xa9\"\"\"\n", "a = true\xef\xac\xb0\n", "a = 1\xe3\x81\x81\n"}) {
    CAPTURE(text);
    CHECK_FALSE(gcr::parse_toml(text, "t.toml").ok());
  }
  // The whitespace toml++ means to accept is still whitespace.
  auto skipped = gcr::parse_toml("a = \"\"\"\\\n\xe3\x80\x80x\"\"\"\n", "t.toml");
  REQUIRE(skipped.ok());
  CHECK((*skipped)["a"].value_or(std::string()) == "x");
}

TEST_CASE("floats read as the nearest double, and the ones no double holds are refused") {
  const std::pair<std::string, double> cases[] = {
      {"1.5", 1.5},
      {"0.1", 0.1},
      {"-2.5e-3", -2.5e-3},
      {"6.02214076e23", 6.02214076e23},
      {"1_000.25", 1000.25},
      {"5e-324", 5e-324},
      {"1.7976931348623157e308", 1.7976931348623157e308}};
  for (const auto& one : cases) {
    const std::string& text = one.first;  // not a structured binding: CAPTURE cannot take one
    const auto& value = one.second;
    CAPTURE(text);
    auto r = gcr::parse_toml("f = " + text + "\n", "t.toml");
    REQUIRE(r.ok());
    CHECK((*r)["f"].value_or(0.0) == value);
  }
  auto special = gcr::parse_toml("a = inf\nb = -inf\nc = nan\nd = -0.0\n", "t.toml");
  REQUIRE(special.ok());
  CHECK((*special)["a"].value_or(0.0) == std::numeric_limits<double>::infinity());
  CHECK((*special)["b"].value_or(0.0) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan((*special)["c"].value_or(0.0)));
  CHECK(std::signbit((*special)["d"].value_or(1.0)));
  CHECK(toml_refusal("f = 1e400\n").find("'1e400' is not representable in 64 bits") !=
        std::string::npos);
}
