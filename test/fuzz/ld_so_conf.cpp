// One ld.so.conf file's text, as an image may hold it: what it names holds no separator
// ldconfig splits on, and written back one entry per line it reads back the same.
#include "hooks/ld_so_conf.h"
#include "fuzz.h"

namespace {

bool is_plain(const std::string& value, const char* refused) {
  return !value.empty() && value.find_first_of(refused) == std::string::npos &&
         value.find('\n') == std::string::npos && value.front() != '\r' && value.back() != '\r';
}

std::string written_back(const std::vector<gcr::LdSoConfLine>& lines) {
  std::string text;
  for (const auto& line : lines) text += (line.include ? "include " : "") + line.value + "\n";
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gcr::ImageBudget budget;
  auto lines = gcr::parse_ld_so_conf(gcr::fuzz::text_of(data, size), "/etc/ld.so.conf", budget);
  if (!lines) return 0;
  for (const auto& line : *lines) {
    gcr::fuzz::require(is_plain(line.value, line.include ? " \t#" : " \t#,:="));
    gcr::fuzz::require(line.include || line.value.rfind("hwcap", 0) != 0);
  }
  gcr::ImageBudget again_budget;
  auto again = gcr::parse_ld_so_conf(written_back(*lines), "/etc/ld.so.conf", again_budget);
  gcr::fuzz::require(again && again->size() == lines->size());
  for (std::size_t i = 0; i < lines->size(); ++i) {
    gcr::fuzz::require((*again)[i].include == (*lines)[i].include &&
                       (*again)[i].value == (*lines)[i].value);
  }
  return 0;
}
