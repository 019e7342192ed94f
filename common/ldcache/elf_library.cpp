#include "ldcache/elf_library.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ldcache/ldcache.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxHeaders = 256;
constexpr std::size_t kMaxDynamic = 4096;

bool read_at(int fd, void* out, std::size_t size, std::uint64_t at) {
  return ::pread(fd, out, size, static_cast<off_t>(at)) == static_cast<ssize_t>(size);
}

// One ELF class's types, so the walk is written once.
template <class Ehdr, class Phdr, class Dyn>
struct Layout {
  using Header = Ehdr;
  using Program = Phdr;
  using Dynamic = Dyn;
};
using Elf64 = Layout<Elf64_Ehdr, Elf64_Phdr, Elf64_Dyn>;
using Elf32 = Layout<Elf32_Ehdr, Elf32_Phdr, Elf32_Dyn>;

// The file offset of virtual address `addr`, through the PT_LOAD segment that maps it.
template <class Phdr>
std::optional<std::uint64_t> file_offset(const std::vector<Phdr>& headers, std::uint64_t addr) {
  for (const auto& ph : headers) {
    if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz)
      return ph.p_offset + (addr - ph.p_vaddr);
  }
  return std::nullopt;
}

std::optional<std::string> string_at(int fd, std::uint64_t at) {
  std::string out;
  char buf[256];
  while (out.size() < 4096) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(at + out.size()));
    if (n <= 0) return std::nullopt;
    const auto end = std::find(buf, buf + n, '\0');
    out.append(buf, end);
    if (end != buf + n) return out;
  }
  return std::nullopt;
}

// The x86 ISA level a library needs (GNU_PROPERTY_X86_ISA_1_NEEDED) beyond the baseline is
// something ldconfig may record; such libraries are left to it.
Status check_isa_level(int fd, std::uint64_t offset, std::uint64_t size, std::uint32_t align) {
  constexpr std::uint32_t kIsaNeeded = 0xc0008002;
  constexpr std::uint32_t kBaseline = 1;
  if (size > 4096) return Error{"a large property note"};
  std::vector<unsigned char> note(size);
  if (size != 0 && !read_at(fd, note.data(), size, offset)) return Error{"truncated property note"};
  // One note: namesz, descsz, type, "GNU\0", then properties (type, size, data, aligned).
  if (size < 16) return {};
  std::uint32_t header[3];
  std::memcpy(header, note.data(), sizeof header);
  std::uint64_t at = 16;
  const std::uint64_t end = std::min<std::uint64_t>(size, at + header[1]);
  while (at + 8 <= end) {
    std::uint32_t property[2];
    std::memcpy(property, note.data() + at, sizeof property);
    at += 8;
    if (property[1] > end - at) return Error{"a malformed property note"};
    if (property[0] == kIsaNeeded && property[1] >= 4) {
      std::uint32_t needed = 0;
      std::memcpy(&needed, note.data() + at, sizeof needed);
      if ((needed & ~kBaseline) != 0) return Error{"needs an x86 ISA level above the baseline"};
    }
    at += (property[1] + align - 1) / align * align;
  }
  return {};
}

template <class L>
Result<ElfLibrary> read_class(int fd, std::int32_t machine_flags, bool is_64) {
  typename L::Header eh{};
  if (!read_at(fd, &eh, sizeof eh, 0)) return Error{"truncated ELF header"};
  if (eh.e_type != ET_DYN) return Error{"not a shared object"};
  if (eh.e_phentsize != sizeof(typename L::Program) || eh.e_phnum > kMaxHeaders)
    return Error{"unexpected program headers"};
  std::vector<typename L::Program> headers(eh.e_phnum);
  if (!headers.empty() &&
      !read_at(fd, headers.data(), headers.size() * sizeof headers[0], eh.e_phoff)) {
    return Error{"truncated program headers"};
  }
  const typename L::Program* dynamic = nullptr;
  for (const auto& ph : headers) {
    if (ph.p_type == PT_INTERP) return Error{"has a program interpreter"};
    if (ph.p_type == PT_DYNAMIC) dynamic = &ph;
    if (ph.p_type == PT_GNU_PROPERTY) {
      if (auto s = check_isa_level(fd, ph.p_offset, ph.p_filesz, is_64 ? 8 : 4); !s)
        return s.error();
    }
  }
  if (dynamic == nullptr) return Error{"no dynamic section"};
  const std::size_t count = dynamic->p_filesz / sizeof(typename L::Dynamic);
  if (count > kMaxDynamic) return Error{"dynamic section too large"};
  std::vector<typename L::Dynamic> entries(count);
  if (!entries.empty() &&
      !read_at(fd, entries.data(), count * sizeof entries[0], dynamic->p_offset)) {
    return Error{"truncated dynamic section"};
  }
  std::optional<std::uint64_t> strtab;
  std::optional<std::uint64_t> soname;
  std::vector<std::uint64_t> needed;
  for (const auto& d : entries) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_SONAME) soname = d.d_un.d_val;
    if (d.d_tag == DT_NEEDED) needed.push_back(d.d_un.d_val);
  }
  ElfLibrary lib;
  if (!strtab) return Error{"no string table"};
  const auto table = file_offset(headers, *strtab);
  if (!table) return Error{"string table outside the file"};
  if (soname) {
    lib.soname = string_at(fd, *table + *soname);
    if (!lib.soname || lib.soname->empty() || *lib.soname == "." || *lib.soname == ".." ||
        lib.soname->find('/') != std::string::npos) {
      return Error{"a soname that is not a file name"};
    }
  }
  bool libc6 = false;
  for (const auto offset : needed) {
    const auto name = string_at(fd, *table + offset);
    if (!name) return Error{"unreadable needed library"};
    if (*name == "libc.so.5" || *name == "libm.so.5") return Error{"a libc5 library"};
    if (*name == "libc.so.6" || *name == "libm.so.6") libc6 = true;
  }
  // ldconfig marks every x86-64 library as needing glibc; an i386 one only when it says so.
  lib.flags = is_64 ? (kLdFlagElfLibc6 | machine_flags) : (libc6 ? kLdFlagElfLibc6 : kLdFlagElf);
  return lib;
}

}  // namespace

Result<ElfLibrary> read_elf_library(int fd) {
  unsigned char ident[EI_NIDENT + 4];  // e_ident, e_type, e_machine
  if (!read_at(fd, ident, sizeof ident, 0) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return Error{std::string(kNotElf)};
  if (ident[EI_DATA] != ELFDATA2LSB) return Error{"not little-endian"};
  const auto machine = static_cast<std::uint16_t>(ident[EI_NIDENT + 2] | ident[EI_NIDENT + 3] << 8);
  if (ident[EI_CLASS] == ELFCLASS64 && machine == EM_X86_64)
    return read_class<Elf64>(fd, kLdFlagX8664Lib64, true);
  if (ident[EI_CLASS] == ELFCLASS32 && machine == EM_386) return read_class<Elf32>(fd, 0, false);
  return Error{"neither x86-64 nor i386"};
}

}  // namespace gcr
