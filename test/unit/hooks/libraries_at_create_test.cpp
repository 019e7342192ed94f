// Which mounts change what the loader-cache update read: those the shim cannot see before
// runc makes them, so the update is left to the hook.
#include <doctest/doctest.h>

#include "hooks/libraries_at_create.h"

namespace {

gcr::LdcachePlan debian_plan() {
  gcr::LdcachePlan plan;
  plan.files_read = {"/etc/ld.so.cache", "/etc/ld.so.conf",
                     "/etc/ld.so.conf.d/x86_64-linux-gnu.conf"};
  plan.directories_scanned = {"/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"};
  plan.includes = {"/etc/ld.so.conf.d/*.conf", "/opt/conf/extra"};
  return plan;
}

}  // namespace

TEST_CASE("mounts that change what ldconfig reads, and mounts that do not") {
  const auto plan = debian_plan();
  for (const char* changes :
       {"/", "/etc", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
        "/etc/ld.so.conf.d/cuda.conf", "/usr", "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu/libfoo.so.1", "/usr/lib/x86_64-linux-gnu/ld-linux.so.2",
        "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/tls", "/lib/libz.so.1", "/opt", "/opt/conf",
        "/opt/conf/extra"}) {
    CAPTURE(changes);
    CHECK(gcr::mount_changes_plan(changes, plan));
  }
  for (const char* harmless :
       {"/proc", "/dev/shm", "/etc/hosts", "/etc/resolv.conf", "/etc/ld.so.conf.d/.hidden.conf",
        "/etc/ld.so.conf.d/notes.txt", "/usr/bin/nvidia-smi", "/lib/firmware/nvidia/550/gsp.bin",
        "/usr/lib/x86_64-linux-gnu/nvidia/xorg/nvidia_drv.so", "/usr/lib/x86_64-linux-gnu/README",
        "/opt/lib/libfoo.so.1", "/opt/conf/other", "/libfoo.so.1",
        "/run/nvidia-persistenced/socket"}) {
    CAPTURE(harmless);
    CHECK_FALSE(gcr::mount_changes_plan(harmless, plan));
  }
}
