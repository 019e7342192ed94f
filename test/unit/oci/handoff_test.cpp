#include <doctest/doctest.h>

#include <unistd.h>

#include <string>

#include "oci/handoff.h"

TEST_CASE("handed fds: --preserve-fds plus LISTEN_FDS for this process") {
  gcr::RuncArgs args;
  args.preserve_fds = 2;
  CHECK(gcr::handed_fd_count(args, nullptr, nullptr) == 2);
  CHECK(gcr::handed_fd_count(args, "3", nullptr) == 2);
  const std::string me = std::to_string(::getpid());
  CHECK(gcr::handed_fd_count(args, "3", me.c_str()) == 5);
  CHECK(gcr::handed_fd_count(args, "3", "1") == 2);
  CHECK(gcr::handed_fd_count(args, "junk", nullptr) == 2);
}
