// Checks the label tests share (unit and integration).
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "labels/labels.h"

namespace gcr::test {

// Every label's name and value as NFD's feature files accept them, the failing one named.
inline void check_label_syntax(const std::map<std::string, std::string>& labels) {
  // Not a structured binding: clang 14 cannot capture one (CAPTURE is a lambda).
  for (const auto& label : labels) {
    const std::string& name = label.first;
    const std::string& value = label.second;
    CAPTURE(name);
    CAPTURE(value);
    CHECK(gcr::is_label_name(name));
    CHECK(gcr::is_label_value(value));
  }
}

}  // namespace gcr::test
