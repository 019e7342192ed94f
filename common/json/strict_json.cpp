#include "json/strict_json.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "base/text.h"

namespace gcr {
namespace {

struct Rejected {
  std::string why;
};

bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

// Tracks the keys of every open object so a repeated key is caught where it appears.
class StrictnessCheck {
 public:
  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    if (depth > kMaxJsonDepth) throw Rejected{"nesting deeper than 256 levels"};
    switch (event) {
      case E::object_start:
        keys_.emplace_back();
        break;
      case E::object_end:
        keys_.pop_back();
        break;
      case E::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (has_nul(key)) throw Rejected{"a key contains a NUL character"};
        if (!keys_.back().insert(key).second) throw Rejected{"duplicate key `" + key + "`"};
        break;
      }
      case E::value:
        if (parsed.is_string() && has_nul(parsed.get_ref<const std::string&>())) {
          throw Rejected{"a string contains a NUL character"};
        }
        break;
      case E::array_start:
      case E::array_end:
        break;
    }
    return true;
  }

 private:
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

Result<Json> parse_json_strict(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") return Error{"starts with a UTF-8 byte-order mark"};
  if (trim(text).empty()) return Error{"is empty"};
  StrictnessCheck check;
  try {
    return Json::parse(text.begin(), text.end(), std::ref(check), true, false);
  } catch (const Rejected& r) {
    return Error{r.why};
  } catch (const Json::parse_error& e) {
    const std::size_t upto = std::min<std::size_t>(e.byte, text.size());
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
    return Error{"not valid JSON at line " + std::to_string(line) + " (byte " +
                 std::to_string(e.byte) + ")"};
  }
}

}  // namespace gcr
