#include <doctest/doctest.h>

#include "json/strict_json.h"
#include "oci/go_fold.h"
#include "oci/spec_view.h"

TEST_CASE("Go's field matching: ASCII case, the long s and the Kelvin sign") {
  CHECK(gcr::go_field_matches("process", "process"));
  CHECK(gcr::go_field_matches("PROCESS", "process"));
  CHECK(gcr::go_field_matches("capabilitie\xc5\xbf", "capabilities"));  // ſ
  CHECK(gcr::go_field_matches("\xc5\xbftart", "start"));
  CHECK(gcr::go_field_matches("hoo\xe2\x84\xaas", "hooks"));  // Kelvin sign
  CHECK_FALSE(gcr::go_field_matches("processes", "process"));
  CHECK_FALSE(gcr::go_field_matches("proces", "process"));
  CHECK_FALSE(
      gcr::go_field_matches("pr\xc3\xb6"
                            "cess",
                            "process"));
  CHECK_FALSE(gcr::go_field_matches("\xc4\xb1mage", "image"));  // dotless i folds to nothing ASCII
  CHECK_FALSE(gcr::go_field_matches("\xff", "a"));
}

TEST_CASE("a key Go would merge into a spec field is refused by the view") {
  for (const char* text :
       {R"({"process":{"capabilitie\u017f":{"bounding":["CAP_SYS_ADMIN"]}}})",
        R"({"hoo\u212as":{}})", R"({"root":{"PATH":"/x"}})", R"({"Process":{}})"}) {
    CAPTURE(text);
    auto doc = gcr::parse_json_strict(text);
    REQUIRE(doc.ok());
    auto view = gcr::view_spec(*doc);
    REQUIRE_FALSE(view.ok());
    CHECK(view.error().message.find("only in case") != std::string::npos);
  }
}
