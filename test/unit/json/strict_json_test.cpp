#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "json/strict_json.h"

namespace {

// The scan without a document refuses the same text with the same words.
std::string rejection(const std::string& text) {
  auto r = gcr::parse_json_strict(text);
  REQUIRE_FALSE(r.ok());
  auto scanned = gcr::json_has_string(text, [](std::string_view) { return false; });
  REQUIRE_FALSE(scanned.ok());
  CHECK(scanned.error().message == r.error().message);
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

// Each value costs tens of bytes however short its text: 64 MiB of `[],` would be a gigabyte
// and more. The scan that builds nothing reads the same text to its end.
TEST_CASE("a document of more values than the budget is refused before it is built") {
  const auto of_values = [](std::size_t n) {  // an object, its array, n - 2 empty arrays in it
    std::string text = "{\"x\":[";
    for (std::size_t i = 3; i < n; ++i) text += "[],";
    return text + "[]]}";
  };
  CHECK(gcr::parse_json_strict(of_values(gcr::kMaxJsonValues)).ok());
  const std::string over = of_values(gcr::kMaxJsonValues + 1);
  auto refused = gcr::parse_json_strict(over);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "more than 1048576 values");
  auto scan = gcr::json_has_string(over, [](std::string_view s) { return s == "y"; });
  REQUIRE(scan.ok());
  CHECK_FALSE(*scan);
}

TEST_CASE("extreme integers and key order survive a round trip") {
  const std::string text =
      R"({"z":18446744073709551615,"a":-9223372036854775808,"m":{"y":1,"b":2.5}})";
  auto r = gcr::parse_json_strict(text);
  REQUIRE(r.ok());
  CHECK(gcr::json_text(*r) == text);
}

TEST_CASE("every number that is not a plain 64-bit integer is kept as written") {
  for (const std::string number :
       {"-0", "0e0", "1E2", "2.50", "1.5e+3", "18446744073709551616", "-9223372036854775809",
        "1e400", "-922331e30872036854775808", "0.1000000000000000055511151231257827"}) {
    CAPTURE(number);
    const std::string text = R"({"uid":)" + number + R"(,"list":[)" + number + "]}";
    auto r = gcr::parse_json_strict(text);
    REQUIRE(r.ok());
    CHECK_FALSE((*r)["uid"].is_number());
    CHECK(gcr::is_raw_number((*r)["uid"]));
    CHECK(gcr::raw_number_text((*r)["uid"]) == number);
    CHECK(gcr::json_text(*r) == text);
  }
  auto plain = gcr::parse_json_strict(R"([0, -1, 42, 9223372036854775807, -9223372036854775808])");
  REQUIRE(plain.ok());
  CHECK((*plain)[0].is_number_unsigned());
  CHECK((*plain)[1].get<std::int64_t>() == -1);
  CHECK((*plain)[3].is_number_unsigned());
  CHECK((*plain)[4].get<std::int64_t>() == INT64_MIN);
}

TEST_CASE("numbers outside JSON's grammar are refused") {
  for (const char* text :
       {"[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[-]", "[0x10]", "[NaN]", "[1e+]", "[-01]"}) {
    CAPTURE(text);
    CHECK(rejection(text).find("not valid JSON") == 0);
  }
}

TEST_CASE(
    "strings: escapes decoded, surrogate pairs joined, lone halves and raw controls refused") {
  auto r = gcr::parse_json_strict(R"(["\"\\\/\b\f\n\r\t", "\u00e9\ud83d\ude00", "é"])");
  REQUIRE(r.ok());
  CHECK((*r)[0] == "\"\\/\b\f\n\r\t");
  CHECK((*r)[1] == "\xc3\xa9\xf0\x9f\x98\x80");
  CHECK((*r)[2] == "\xc3\xa9");
  CHECK(rejection(R"(["\udc00"])").find("a lone low surrogate") != std::string::npos);
  CHECK(rejection(R"(["\ud83dx"])").find("without its low half") != std::string::npos);
  CHECK(rejection("[\"a\tb\"]").find("a control character") != std::string::npos);
  CHECK(rejection(R"(["\x"])").find("an unknown escape") != std::string::npos);
  for (const char* bad :
       {"[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xe2\x82\"]"}) {
    CAPTURE(bad);
    CHECK(rejection(bad).find("invalid UTF-8") != std::string::npos);
  }
}

TEST_CASE("strings: the text between escapes and multi-byte characters is kept whole") {
  auto r = gcr::parse_json_strict(
      R"({"key one": ["ab\ncd", "x\u00e9yé z!", "plain text, with ~ punctuation", "\\end", ""]})");
  REQUIRE(r.ok());
  const auto& list = r->at("key one");
  CHECK(list[0] == "ab\ncd");
  CHECK(list[1] == "x\xc3\xa9y\xc3\xa9 z!");
  CHECK(list[2] == "plain text, with ~ punctuation");
  CHECK(list[3] == "\\end");
  CHECK(list[4] == "");
}

TEST_CASE("the writer keeps nlohmann's layout and never throws on bad UTF-8") {
  const gcr::Json doc = gcr::Json::parse(
      R"({"a":[1,{"b":null,"c":[]}],"d":{},"e":"x\u0001\"y\u007f","f":1.5,"g":true,"h":-3})");
  CHECK(gcr::json_text(doc) == doc.dump());
  CHECK(gcr::json_text(doc, 2) == doc.dump(2));
  CHECK(gcr::json_text(doc, 4) == doc.dump(4));
  CHECK(gcr::json_text(gcr::Json("a\xff"
                                 "b")) ==
        "\"a\xEF\xBF\xBD"
        "b\"");
}

TEST_CASE("an object with many keys is read whole and in order, duplicates still found") {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i)
    text += (i != 0 ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  text += "}";
  auto r = gcr::parse_json_strict(text);
  REQUIRE(r.ok());
  CHECK(r->size() == 100000);
  CHECK(r->begin().key() == "k0");
  CHECK((*r)["k99999"] == 99999);
  CHECK(gcr::json_text(*r) == text);
  text.insert(text.size() - 1, ",\"k5\":1");
  CHECK(rejection(text) == "duplicate key `k5`");
}

TEST_CASE("json_has_string looks at every key and string value, decoded, and at nothing else") {
  const auto has = [](const std::string& text, const std::string& wanted) {
    auto r = gcr::json_has_string(text, [&](std::string_view s) { return s == wanted; });
    REQUIRE(r.ok());
    return *r;
  };
  const std::string doc =
      R"({"a": {"b\u0063": ["x", {"d": "\u00e9t\u00e9"}]}, "n": 12, "t": true, "z": null})";
  for (const char* found : {"a", "bc", "x", "d", "\xc3\xa9t\xc3\xa9", "n", "t", "z"}) {
    CAPTURE(found);
    CHECK(has(doc, found));
  }
  for (const char* absent : {R"(b\u0063)", "12", "true", "null", R"(\u00e9t\u00e9)", ""}) {
    CAPTURE(absent);
    CHECK_FALSE(has(doc, absent));
  }
  CHECK(has(R"("top")", "top"));
  CHECK_FALSE(has("[1, 2.5, -0, 1e400]", "1"));
}

TEST_CASE("json_has_string stops at the first string it wants; without one it reads to the end") {
  const auto scan = [](const std::string& text) {
    return gcr::json_has_string(text, [](std::string_view s) { return s == "NVIDIA_X"; });
  };
  // What follows the string is left to the full reader.
  for (const char* stopped : {R"({"env": ["NVIDIA_X"], "k": 1, "k": 2})", R"(["NVIDIA_X", )",
                              R"({"NVIDIA_X": 1} trailing)", R"({"a": {"NVIDIA_X": )"}) {
    CAPTURE(stopped);
    auto r = scan(stopped);
    REQUIRE(r.ok());
    CHECK(*r);
  }
  auto duplicate = scan(R"({"env": ["PATH=/bin"], "k": 1, "k": 2})");
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.error().message == "duplicate key `k`");
  CHECK_FALSE(scan(R"(["PATH=/bin", )").ok());
}

TEST_CASE("object_slot adds a member at the end, keeps the others and their order") {
  gcr::Json spec =
      gcr::parse_json_strict(R"({"b":{"deep":[1,2,{"x":"y"}]},"a":"text","c":[true]})").value();
  const gcr::Json before = spec;
  CHECK(&gcr::object_slot(spec, "a") == &spec["a"]);  // found, nothing added
  CHECK(spec.size() == 3);
  gcr::object_slot(spec, "hooks") = "added";
  for (int i = 0; i < 40; ++i) gcr::object_slot(spec, "k" + std::to_string(i)) = i;
  CHECK(spec.size() == 44);
  CHECK(spec.begin().key() == "b");
  CHECK(std::next(spec.begin(), 3).key() == "hooks");
  CHECK(spec["hooks"] == "added");
  CHECK(spec["k39"] == 39);
  gcr::Json same = spec;
  for (int i = 0; i < 40; ++i) same.erase("k" + std::to_string(i));
  same.erase("hooks");
  CHECK(same == before);
  CHECK(gcr::json_text(same) == gcr::json_text(before));
}

TEST_CASE("object_slot makes a null an object and refuses anything else") {
  gcr::Json null;
  gcr::object_slot(null, "k") = 1;
  CHECK(null == gcr::Json::parse(R"({"k":1})"));
  gcr::Json text = "a string";
  CHECK_THROWS(gcr::object_slot(text, "k"));
}
