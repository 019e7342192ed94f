/* no-openat2 [--mount-setattr | --old-kernel] CMD...: runs CMD with system calls failing with
 * ENOSYS (a seccomp filter), as on older kernels, so the fallbacks are what gets exercised:
 * by default openat2(2) (Linux 5.6); --mount-setattr: mount_setattr(2) alone (5.12, a kernel
 * from 5.6 to 5.11); --old-kernel: openat2 and the new mount API (open_tree, move_mount,
 * mount_setattr), as on RHEL 8's 4.18. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENY(nr)                                   \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS)

int main(int argc, char** argv) {
  struct sock_filter head[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
  };
  struct sock_filter openat2_only[] = {DENY(SYS_openat2)};
  struct sock_filter mount_setattr_only[] = {DENY(SYS_mount_setattr)};
  struct sock_filter old_kernel[] = {DENY(SYS_openat2), DENY(SYS_open_tree), DENY(SYS_move_mount),
                                     DENY(SYS_mount_setattr)};
  struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_filter filter[32];
  struct sock_filter* deny = openat2_only;
  size_t denied = sizeof openat2_only / sizeof openat2_only[0];
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--mount-setattr") == 0) {
    deny = mount_setattr_only;
    denied = sizeof mount_setattr_only / sizeof mount_setattr_only[0];
    first = 2;
  } else if (argc > 1 && strcmp(argv[1], "--old-kernel") == 0) {
    deny = old_kernel;
    denied = sizeof old_kernel / sizeof old_kernel[0];
    first = 2;
  }
  if (argc <= first) {
    fprintf(stderr, "usage: no-openat2 [--mount-setattr | --old-kernel] CMD...\n");
    return 2;
  }
  size_t n = 0;
  memcpy(filter, head, sizeof head);
  n += sizeof head / sizeof head[0];
  memcpy(filter + n, deny, denied * sizeof deny[0]);
  n += denied;
  filter[n++] = allow;
  struct sock_fprog prog = {(unsigned short)n, filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("seccomp");
    return 2;
  }
  execv(argv[first], argv + first);
  perror(argv[first]);
  return 127;
}
