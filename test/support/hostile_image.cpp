#include "hostile_image.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "ldcache/image_budget.h"
#include "test_support.h"

extern char** environ;

namespace gcr::test {
namespace {

template <class T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// The environment with `env` set over it, as "NAME=value" strings.
std::vector<std::string> environment_with(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    if (env.count(entry.substr(0, entry.find('='))) == 0) out.push_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Measured run_measured(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env,
                      const std::string& stdin_text) {
  TempDir io;
  write_file(io / "in", stdin_text);
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = environment_with(env);
  const auto arg_pointers = pointers(args);
  const auto env_pointers = pointers(environment);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    const int in = ::open((io / "in").c_str(), O_RDONLY | O_CLOEXEC);
    const int out = ::open((io / "out").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    const int err = ::open((io / "err").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 ||
        ::dup2(err, 2) < 0)
      ::_exit(126);
    ::execve(arg_pointers[0], arg_pointers.data(), env_pointers.data());
    ::_exit(127);
  }
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0)
    throw std::runtime_error("waitid");
  Measured m;
  m.cpu_seconds = cpu_seconds(pid);  // exited, not yet reaped
  int status = 0;
  struct rusage usage {};
  if (::wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4");
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.max_rss_kb = usage.ru_maxrss;
  m.minor_faults = usage.ru_minflt;
  m.out = read_file(io / "out");
  m.err = read_file(io / "err");
  return m;
}

std::string ld_cache_sharing_one_string(std::size_t entries, std::size_t length) {
  constexpr std::size_t kHeader = 48;
  constexpr std::size_t kEntry = 24;
  const auto at = static_cast<std::uint32_t>(kHeader + entries * kEntry);
  std::string out("glibc-ld.so.cache1.1");
  put(out, static_cast<std::uint32_t>(entries));
  put(out, static_cast<std::uint32_t>(length + 1));
  out.append(20, '\0');  // flags, padding, extension offset, unused
  out.reserve(at + length + 1);
  for (std::size_t i = 0; i < entries; ++i) {
    put(out, std::int32_t{0x0303});
    put(out, at);
    put(out, at);
    out.append(12, '\0');  // osversion, hwcap
  }
  out += "/" + std::string(length - 1, 'a');
  out.push_back('\0');
  return out;
}

std::string elf_with_needed(const std::string& soname, std::size_t needed, std::size_t length) {
  const std::string strings =
      std::string(1, '\0') + soname + '\0' + std::string(length, 'n') + '\0';
  const std::uint64_t dynamic_at = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);
  std::vector<Elf64_Dyn> dynamic;
  const std::uint64_t strtab_at = dynamic_at + (needed + 3) * sizeof(Elf64_Dyn);
  dynamic.push_back(Elf64_Dyn{DT_STRTAB, {strtab_at}});
  dynamic.push_back(Elf64_Dyn{DT_SONAME, {1}});
  for (std::size_t i = 0; i < needed; ++i)
    dynamic.push_back(Elf64_Dyn{DT_NEEDED, {soname.size() + 2}});
  dynamic.push_back(Elf64_Dyn{DT_NULL, {0}});
  const std::uint64_t size = strtab_at + strings.size();

  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 2;
  const Elf64_Phdr load{PT_LOAD, PF_R, 0, 0, 0, size, size, 0x1000};
  const Elf64_Phdr dyn{PT_DYNAMIC,
                       PF_R,
                       dynamic_at,
                       dynamic_at,
                       dynamic_at,
                       dynamic.size() * sizeof(Elf64_Dyn),
                       dynamic.size() * sizeof(Elf64_Dyn),
                       8};
  std::string out;
  out.reserve(size);
  put(out, eh);
  put(out, load);
  put(out, dyn);
  for (const auto& d : dynamic) put(out, d);
  return out + strings;
}

namespace {

const std::string kHostileFolder = "/usr/lib/x86_64-linux-gnu";

void make_empty_files(const std::string& dir, int count) {
  make_dirs(dir);
  for (int i = 0; i < count; ++i) {
    const std::string name = dir + "/f" + std::to_string(i);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + name);
    ::close(fd);
  }
}

// Everything in the image a minute older than its cache, as in an image built before its last
// ldconfig run.
void age_image(const std::string& rootfs) {
  const std::string cache = rootfs + "/etc/ld.so.cache";
  if (run({"/bin/sh", "-c",
           "t=$(($(stat -c %Y " + cache + ") - 60)); find " + rootfs + " ! -path " + cache +
               " -exec touch -h -d @$t {} +"})
          .exit_code != 0)
    throw std::runtime_error("cannot date " + rootfs);
}

}  // namespace

std::string plant_hostile_image(const std::string& kind, const std::string& rootfs) {
  if (kind == "cache") {
    const std::size_t entries = (kBudgetCacheBytes - 48 - 4096) / 24;
    write_file(rootfs + "/etc/ld.so.cache", ld_cache_sharing_one_string(entries, 4095));
    return "over the image budget of 65536 loader-cache entries (/etc/ld.so.cache)";
  }
  if (kind == "includes") {
    make_empty_files(rootfs + "/etc/big", 20000);
    std::string conf = "include /etc/ld.so.conf.d/*.conf\n";
    for (int i = 0; i < 100; ++i) conf += "include /etc/big/*.nomatch\n";
    write_file(rootfs + "/etc/ld.so.conf", conf);
    return "over the image budget of 262144 names matched against include patterns "
           "(/etc/ld.so.conf)";
  }
  if (kind == "needed") {
    age_image(rootfs);
    // 64 libraries (the 256 cost the old reader 19.5 s; these are enough to show it).
    for (int i = 0; i < 64; ++i) {
      const std::string name = "libneedy" + std::to_string(i) + ".so.1";
      write_file(rootfs + kHostileFolder + "/" + name, elf_with_needed(name, 4093, 4000));
    }
    return "over the image budget of 1024 string lookups in one library (" + kHostileFolder +
           "/libneedy0.so.1)";
  }
  throw std::runtime_error("no hostile image `" + kind + "`: cache, includes or needed");
}

}  // namespace gcr::test
