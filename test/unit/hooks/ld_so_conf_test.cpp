// One ld.so.conf file's text as the in-process cache reads it: the directories and include
// patterns it names, and the forms it leaves to ldconfig.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hooks/container_hooks.h"
#include "hooks/ld_so_conf.h"
#include "test_support.h"

namespace {

using Lines = std::vector<gcr::LdSoConfLine>;

Lines lines_of(std::string_view text) {
  gcr::ImageBudget budget;
  auto lines = gcr::parse_ld_so_conf(text, "/etc/ld.so.conf", budget);
  REQUIRE(lines.ok());
  return *lines;
}

std::string conf_error(std::string_view text) {
  gcr::ImageBudget budget;
  auto lines = gcr::parse_ld_so_conf(text, "/etc/ld.so.conf.d/x.conf", budget);
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
  CHECK(conf_error("hwcap 1 tls\n") == "hwcap lines (/etc/ld.so.conf.d/x.conf)");
  CHECK(conf_error("/usr/lib=ELF\n") ==
        "a line ldconfig splits or types: `/usr/lib=ELF` (/etc/ld.so.conf.d/x.conf)");
  CHECK(conf_error("/lib /usr/lib\n").find("splits or types: `/lib /usr/lib`") !=
        std::string::npos);
  CHECK(conf_error("/lib:/usr/lib\n").find("splits or types") != std::string::npos);
  CHECK(conf_error("/lib,/usr/lib\n").find("splits or types") != std::string::npos);
}

TEST_CASE("ld.so.conf: an empty or comment-only file names nothing") {
  CHECK(lines_of("").empty());
  CHECK(lines_of("# nothing\n\n   \t\n#include /etc/x.conf\n").empty());
}

TEST_CASE("the drop-in declares only the folders no other configuration file names") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  gcr::test::write_file(r + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/usr/lib64\n");
  gcr::test::write_file(r + "/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
                        "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n");
  // Ours, left by an earlier create: what it names does not count as the image's.
  gcr::test::write_file(r + "/etc/ld.so.conf.d/00-gpu-container-runtime.conf",
                        "# ours\n/usr/lib/i386-linux-gnu\n");
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  gcr::ImageBudget budget;
  const auto conf = gcr::read_ld_so_conf(*root, budget);
  REQUIRE(conf.ok());
  CHECK(conf->directories == std::vector<std::string>{"/usr/lib/i386-linux-gnu",
                                                      "/lib/x86_64-linux-gnu",
                                                      "/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
  REQUIRE(conf->directory_files.size() == 4);
  CHECK(conf->files[conf->directory_files[0]] == "/etc/ld.so.conf.d/00-gpu-container-runtime.conf");
  CHECK(conf->files[conf->directory_files[3]] == "/etc/ld.so.conf");
  const std::vector<std::string> folders{"/usr/lib/i386-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                         "/usr/local/nvidia/lib", "/usr/lib64"};
  CHECK(gcr::folders_to_declare(conf, folders) ==
        std::vector<std::string>{"/usr/lib/i386-linux-gnu", "/usr/local/nvidia/lib"});
  // Unreadable configuration (a form this code does not read): every folder is declared.
  gcr::test::write_file(r + "/etc/ld.so.conf.d/hw.conf", "hwcap 1 tls\n");
  gcr::ImageBudget again;
  const auto unread = gcr::read_ld_so_conf(*root, again);
  REQUIRE_FALSE(unread.ok());
  CHECK(gcr::folders_to_declare(unread, folders) == folders);
}

TEST_CASE("the drop-in as read is kept when it holds the folders, rewritten when it changed") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  const std::string drop_in = r + "/etc/ld.so.conf.d/00-gpu-container-runtime.conf";
  const std::vector<std::string> declared{"/usr/local/nvidia/lib64"};
  gcr::test::write_file(r + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  gcr::test::write_file(drop_in, gcr::drop_in_content(declared));
  REQUIRE(::chmod(drop_in.c_str(), 0644) == 0);
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  const auto inode = [&] {
    struct stat st {};
    REQUIRE(::lstat(drop_in.c_str(), &st) == 0);
    return st.st_ino;
  };
  gcr::ImageBudget budget;
  const auto conf = gcr::read_ld_so_conf(*root, budget);
  REQUIRE(conf.ok());
  const auto kept = inode();
  REQUIRE(gcr::write_loader_configuration(*root, conf, declared).ok());
  CHECK(inode() == kept);
  // Another file of that size at the name since the read: replaced by what is declared.
  std::string other = gcr::drop_in_content(declared);
  other.back() = '4';
  gcr::test::write_file(t / "other", other);
  REQUIRE(::chmod((t / "other").c_str(), 0644) == 0);
  REQUIRE(::rename((t / "other").c_str(), drop_in.c_str()) == 0);
  REQUIRE(gcr::write_loader_configuration(*root, conf, declared).ok());
  CHECK(gcr::test::read_file(drop_in) == gcr::drop_in_content(declared));
  // An image without ld.so.conf gets one; one the configuration read is not looked for again.
  REQUIRE(::unlink((r + "/etc/ld.so.conf").c_str()) == 0);
  gcr::ImageBudget none;
  const auto without = gcr::read_ld_so_conf(*root, none);
  REQUIRE(without.ok());
  CHECK_FALSE(without->exists);
  REQUIRE(gcr::write_loader_configuration(*root, without, declared).ok());
  CHECK(gcr::test::read_file(r + "/etc/ld.so.conf") == "include /etc/ld.so.conf.d/*.conf\n");
}

TEST_CASE("ld.so.conf: a directory is listed once however many include lines name it") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  std::string conf;
  for (int i = 0; i < 300; ++i) conf += "include /etc/few/*.nomatch\n";
  gcr::test::write_file(r + "/etc/ld.so.conf", conf + "include /etc/few/*.conf\n");
  for (const char* name : {"a.conf", "b.conf", "c.txt"})
    gcr::test::write_file(r + "/etc/few/" + name, "/opt/lib\n");
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  gcr::ImageBudget budget;
  const auto read = gcr::read_ld_so_conf(*root, budget);
  REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
  CHECK(read->files ==
        std::vector<std::string>{"/etc/ld.so.conf", "/etc/few/a.conf", "/etc/few/b.conf"});
  // 300 listings would be over the budget of listings: the directory was listed once.
  CHECK_FALSE(budget.exceeded());
}

TEST_CASE("ld.so.conf: names matched against include patterns count against the budget") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  gcr::test::make_dirs(r + "/etc/big");
  for (int i = 0; i < 2000; ++i) gcr::test::write_file(r + "/etc/big/f" + std::to_string(i), "");
  std::string conf;
  for (int i = 0; i < 200; ++i) conf += "include /etc/big/*.nomatch\n";
  gcr::test::write_file(r + "/etc/ld.so.conf", conf);
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  gcr::ImageBudget budget;
  const auto read = gcr::read_ld_so_conf(*root, budget);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().message ==
        "over the image budget of 262144 names matched against include patterns "
        "(/etc/ld.so.conf)");
}

TEST_CASE("ld.so.conf: configuration lines count against the budget") {
  std::string conf;
  for (std::size_t i = 0; i <= gcr::kBudgetConfigurationLines; ++i)
    conf += "/opt/lib" + std::to_string(i) + "\n";
  gcr::ImageBudget budget;
  const auto lines = gcr::parse_ld_so_conf(conf, "/etc/ld.so.conf", budget);
  REQUIRE_FALSE(lines.ok());
  CHECK(lines.error().message ==
        "over the image budget of 4096 configuration lines (/etc/ld.so.conf)");
}

TEST_CASE("a plan past its deadline stops at the next charge, whatever it reads") {
  gcr::ImageBudget late(gcr::ImageBudget::Clock::now() - std::chrono::milliseconds(1));
  const auto lines = gcr::parse_ld_so_conf("/opt/lib\n", "/etc/ld.so.conf", late);
  REQUIRE_FALSE(lines.ok());
  CHECK(lines.error().message == "over the image budget of 1000 ms of work (/etc/ld.so.conf)");
  REQUIRE(late.exceeded().has_value());
  CHECK(late.exceeded()->message == lines.error().message);
  gcr::ImageBudget fresh;
  CHECK(gcr::parse_ld_so_conf("/opt/lib\n", "/etc/ld.so.conf", fresh).ok());
}
