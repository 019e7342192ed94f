// One ld.so.conf file's text as the in-process cache reads it: the directories and include
// patterns it names, and the forms it leaves to ldconfig.
#include <doctest/doctest.h>

#include "hooks/ld_so_conf.h"

namespace {

using Lines = std::vector<gcr::LdSoConfLine>;

Lines lines_of(std::string_view text) {
  auto lines = gcr::parse_ld_so_conf(text, "/etc/ld.so.conf");
  REQUIRE(lines.ok());
  return *lines;
}

std::string error_of(std::string_view text) {
  auto lines = gcr::parse_ld_so_conf(text, "/etc/ld.so.conf.d/x.conf");
  REQUIRE_FALSE(lines.ok());
  return lines.error().message;
}

bool same(const Lines& a, const Lines& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].include != b[i].include || a[i].value != b[i].value) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("ld.so.conf: directories and include patterns in file order, comments left out") {
  const auto lines = lines_of(
      "# libc default configuration\n"
      "include /etc/ld.so.conf.d/*.conf\n"
      "\n"
      "  /usr/local/lib  # local\r\n"
      "include\tfirst.conf \t /opt/second.conf\n"
      "/usr/lib/x86_64-linux-gnu");
  CHECK(same(lines, Lines{{true, "/etc/ld.so.conf.d/*.conf"},
                          {false, "/usr/local/lib"},
                          {true, "first.conf"},
                          {true, "/opt/second.conf"},
                          {false, "/usr/lib/x86_64-linux-gnu"}}));
}

TEST_CASE("ld.so.conf: `include` with nothing after it names a directory, as ldconfig reads it") {
  CHECK(same(lines_of("include\n"), Lines{{false, "include"}}));
  CHECK(same(lines_of("include   \n"), Lines{{false, "include"}}));
  CHECK(same(lines_of("includes\n"), Lines{{false, "includes"}}));
}

TEST_CASE("ld.so.conf: the forms ldconfig gives a meaning this reader does not reproduce") {
  CHECK(error_of("hwcap 1 tls\n") == "hwcap lines (/etc/ld.so.conf.d/x.conf)");
  CHECK(error_of("/usr/lib=ELF\n") ==
        "a line ldconfig splits or types: `/usr/lib=ELF` (/etc/ld.so.conf.d/x.conf)");
  CHECK(error_of("/lib /usr/lib\n").find("splits or types: `/lib /usr/lib`") != std::string::npos);
  CHECK(error_of("/lib:/usr/lib\n").find("splits or types") != std::string::npos);
  CHECK(error_of("/lib,/usr/lib\n").find("splits or types") != std::string::npos);
}

TEST_CASE("ld.so.conf: an empty or comment-only file names nothing") {
  CHECK(lines_of("").empty());
  CHECK(lines_of("# nothing\n\n   \t\n#include /etc/x.conf\n").empty());
}
