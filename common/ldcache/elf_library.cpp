#include "ldcache/elf_library.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "ldcache/ldcache.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxHeaders = 256;
constexpr std::size_t kMaxDynamic = 4096;
constexpr std::size_t kMaxSections = 4096;

bool read_at(int fd, void* out, std::size_t size, std::uint64_t at) {
  return ::pread(fd, out, size, static_cast<off_t>(at)) == static_cast<ssize_t>(size);
}

// The budget the reader charges, in the name of the file it reads.
struct Meter {
  ImageBudget& budget;
  std::string_view file;
  [[nodiscard]] Status charge(Budget what, std::size_t n) const {
    return budget.charge(what, n, file);
  }
};

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

// The part of a string table that holds the names a library's dynamic section points at.
class Strings {
 public:
  // Reads it with one pread: from the first name to NAME_MAX bytes past the last (a soname is a
  // file name, the needed names looked for are shorter). Charged first.
  static Result<Strings> read(int fd, std::uint64_t table, const std::vector<std::uint64_t>& at,
                              const Meter& meter) {
    Strings out;
    if (at.empty()) return out;
    const auto [low, high] = std::minmax_element(at.begin(), at.end());
    const std::uint64_t spread = *high - *low;
    const std::size_t span = spread > kBudgetStringTableBytes
                                 ? kBudgetStringTableBytes + 1
                                 : static_cast<std::size_t>(spread) + NAME_MAX + 1;
    if (auto s = meter.charge(Budget::kStringTableBytes, span); !s) return s.error();
    if (auto s = meter.charge(Budget::kLibraryBytes, span); !s) return s.error();
    constexpr auto kMaxOffset = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
    if (table > kMaxOffset || *low > kMaxOffset - table)
      return Error{"string table outside the file"};
    out.first_ = *low;
    out.bytes_.resize(span);
    const ssize_t n = ::pread(fd, out.bytes_.data(), span, static_cast<off_t>(table + *low));
    if (n < 0) return Error{"unreadable string table"};
    out.bytes_.resize(static_cast<std::size_t>(n));
    return out;
  }

  // Whether the name at `offset` was read (its first byte, at least).
  [[nodiscard]] bool has(std::uint64_t offset) const { return offset - first_ < bytes_.size(); }

  // The name at `offset` when it ends within NAME_MAX bytes; nothing otherwise.
  [[nodiscard]] std::optional<std::string_view> file_name(std::uint64_t offset) const {
    if (!has(offset)) return std::nullopt;
    const auto rest = std::string_view(bytes_).substr(offset - first_, NAME_MAX + 1);
    const auto end = rest.find('\0');
    if (end == std::string_view::npos) return std::nullopt;
    return rest.substr(0, end);
  }

  // Whether the name at `offset` is `name`.
  [[nodiscard]] bool is(std::uint64_t offset, std::string_view name) const {
    if (!has(offset)) return false;
    const auto here = std::string_view(bytes_).substr(offset - first_, name.size() + 1);
    return here.size() == name.size() + 1 && here.back() == '\0' &&
           here.substr(0, name.size()) == name;
  }

 private:
  std::uint64_t first_ = 0;
  std::string bytes_;
};

// The x86 ISA level a library needs (GNU_PROPERTY_X86_ISA_1_NEEDED) beyond the baseline is
// something ldconfig may record; such libraries are left to it.
Status check_isa_level(int fd, std::uint64_t offset, std::uint64_t size, std::uint32_t align,
                       const Meter& meter) {
  constexpr std::uint32_t kIsaNeeded = 0xc0008002;
  constexpr std::uint32_t kBaseline = 1;
  if (size > 4096) return Error{"a large property note"};
  if (auto s = meter.charge(Budget::kLibraryBytes, size); !s) return s;
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

// What the dynamic section names: the string table's address, the soname's and the needed
// libraries' offsets in it.
struct DynamicNames {
  std::optional<std::uint64_t> strtab;
  std::optional<std::uint64_t> soname;
  std::vector<std::uint64_t> needed;
};

template <class L>
Result<DynamicNames> read_dynamic(int fd, const typename L::Program& dynamic, const Meter& meter) {
  const std::size_t count = dynamic.p_filesz / sizeof(typename L::Dynamic);
  if (count > kMaxDynamic) return Error{"dynamic section too large"};
  if (auto s = meter.charge(Budget::kLibraryBytes, count * sizeof(typename L::Dynamic)); !s)
    return s.error();
  std::vector<typename L::Dynamic> entries(count);
  if (!entries.empty() &&
      !read_at(fd, entries.data(), count * sizeof entries[0], dynamic.p_offset)) {
    return Error{"truncated dynamic section"};
  }
  DynamicNames names;
  for (const auto& d : entries) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) names.strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_SONAME) names.soname = d.d_un.d_val;
    if (d.d_tag == DT_NEEDED) names.needed.push_back(d.d_un.d_val);
  }
  return names;
}

struct Names {
  std::optional<std::string> soname;
  bool libc6 = false;  // libc.so.6 or libm.so.6 is needed
};

// The soname, and whether the library needs glibc, from the names at the string table's file
// offset `table`; each name looked up is charged.
Result<Names> read_names(int fd, std::uint64_t table, const DynamicNames& names,
                         const Meter& meter) {
  std::vector<std::uint64_t> offsets = names.needed;
  if (names.soname) offsets.push_back(*names.soname);
  if (auto s = meter.charge(Budget::kLookupsPerLibrary, offsets.size()); !s) return s.error();
  if (auto s = meter.charge(Budget::kLookups, offsets.size()); !s) return s.error();
  auto strings = Strings::read(fd, table, offsets, meter);
  if (!strings) return strings.error();
  Names lib;
  if (names.soname) {
    const auto soname = strings->file_name(*names.soname);
    if (!soname || !is_soname_file_name(*soname)) return Error{"a soname that is not a file name"};
    lib.soname = std::string(*soname);
  }
  for (const auto offset : names.needed) {
    if (!strings->has(offset)) return Error{"unreadable needed library"};
    if (strings->is(offset, "libc.so.5") || strings->is(offset, "libm.so.5"))
      return Error{"a libc5 library"};
    if (strings->is(offset, "libc.so.6") || strings->is(offset, "libm.so.6")) lib.libc6 = true;
  }
  return lib;
}

template <class L>
Result<ElfLibrary> read_class(int fd, std::int32_t machine_flags, bool is_64, const Meter& meter) {
  typename L::Header eh{};
  if (!read_at(fd, &eh, sizeof eh, 0)) return Error{"truncated ELF header"};
  if (eh.e_type != ET_DYN) return Error{"not a shared object"};
  if (eh.e_phentsize != sizeof(typename L::Program) || eh.e_phnum > kMaxHeaders)
    return Error{"unexpected program headers"};
  if (auto s = meter.charge(Budget::kLibraryBytes, sizeof eh + eh.e_phnum * eh.e_phentsize); !s)
    return s.error();
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
      if (auto s = check_isa_level(fd, ph.p_offset, ph.p_filesz, is_64 ? 8 : 4, meter); !s)
        return s.error();
    }
  }
  if (dynamic == nullptr) return Error{"no dynamic section"};
  auto names = read_dynamic<L>(fd, *dynamic, meter);
  if (!names) return names.error();
  if (!names->strtab) return Error{"no string table"};
  const auto table = file_offset(headers, *names->strtab);
  if (!table) return Error{"string table outside the file"};
  auto found = read_names(fd, *table, *names, meter);
  if (!found) return found.error();
  ElfLibrary lib;
  lib.soname = std::move(found->soname);
  // ldconfig marks every x86-64 library as needing glibc; an i386 one only when it says so.
  lib.flags =
      is_64 ? (kLdFlagElfLibc6 | machine_flags) : (found->libc6 ? kLdFlagElfLibc6 : kLdFlagElf);
  return lib;
}

std::uint64_t align_up(std::uint64_t n, std::uint64_t to) {
  return (n + to - 1) / to * to;
}

// The descriptor of `owner`'s note among the notes in `notes` (4- or 8-byte aligned entries:
// namesz, descsz, type, name, descriptor), NULs around it removed.
std::optional<std::string> note_of(std::string_view notes, std::string_view owner,
                                   std::uint64_t align) {
  std::uint64_t at = 0;
  while (at <= notes.size() && notes.size() - at >= 12) {
    std::uint32_t header[3];
    std::memcpy(header, notes.data() + at, sizeof header);
    const std::uint64_t name_at = at + 12;
    const std::uint64_t desc_at = name_at + align_up(header[0], align);
    if (desc_at > notes.size() || header[1] > notes.size() - desc_at) return std::nullopt;
    const auto trimmed = [&](std::uint64_t from, std::uint64_t size) {
      std::string_view s = notes.substr(from, size);
      while (!s.empty() && s.front() == '\0') s.remove_prefix(1);
      while (!s.empty() && s.back() == '\0') s.remove_suffix(1);
      return s;
    };
    if (trimmed(name_at, header[0]) == owner) return std::string(trimmed(desc_at, header[1]));
    at = desc_at + align_up(header[1], align);
  }
  return std::nullopt;
}

// The section headers of the 64-bit file `eh` describes, charged.
Result<std::vector<Elf64_Shdr>> read_sections(int fd, const Elf64_Ehdr& eh, const Meter& meter) {
  if (eh.e_shoff == 0 || eh.e_shnum == 0) return std::vector<Elf64_Shdr>{};
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > kMaxSections ||
      eh.e_shstrndx >= eh.e_shnum)
    return Error{"unexpected section headers"};
  if (auto s = meter.charge(Budget::kLibraryBytes, eh.e_shnum * sizeof(Elf64_Shdr)); !s)
    return s.error();
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!read_at(fd, sections.data(), sections.size() * sizeof sections[0], eh.e_shoff))
    return Error{"truncated section headers"};
  return sections;
}

// Whether the section name at `offset` in the section-name table `names` is `name`; charged
// as one lookup of at most name.size() + 1 bytes.
Result<bool> section_is(int fd, const Elf64_Shdr& names, std::uint32_t offset,
                        std::string_view name, const Meter& meter) {
  if (auto s = meter.charge(Budget::kLookupsPerLibrary, 1); !s) return s.error();
  if (auto s = meter.charge(Budget::kLookups, 1); !s) return s.error();
  if (offset >= names.sh_size || name.size() + 1 > names.sh_size - offset) return false;
  if (auto s = meter.charge(Budget::kLibraryBytes, name.size() + 1); !s) return s.error();
  std::string here(name.size() + 1, '\0');
  if (!read_at(fd, here.data(), here.size(), names.sh_offset + offset))
    return Error{"truncated section names"};
  return here.back() == '\0' && std::string_view(here).substr(0, name.size()) == name;
}

}  // namespace

Result<std::optional<std::string>> read_elf_note(int fd, std::string_view section,
                                                 std::string_view owner, ImageBudget& budget,
                                                 std::string_view file) {
  const Meter meter{budget, file};
  Elf64_Ehdr eh{};
  if (!read_at(fd, &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return Error{std::string(kNotElf), ErrorKind::kNotElf};
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return Error{"not a 64-bit little-endian file"};
  auto sections = read_sections(fd, eh, meter);
  if (!sections) return sections.error();
  for (const auto& sh : *sections) {
    if (sh.sh_type != SHT_NOTE) continue;
    auto named = section_is(fd, (*sections)[eh.e_shstrndx], sh.sh_name, section, meter);
    if (!named) return named.error();
    if (!*named) continue;
    if (sh.sh_size > kMaxNoteSectionBytes) return Error{"a large " + std::string(section)};
    if (auto s = meter.charge(Budget::kLibraryBytes, sh.sh_size); !s) return s.error();
    std::string notes(sh.sh_size, '\0');
    if (!read_at(fd, notes.data(), notes.size(), sh.sh_offset))
      return Error{"truncated " + std::string(section)};
    return note_of(notes, owner, sh.sh_addralign == 8 ? 8 : 4);
  }
  return std::optional<std::string>();
}

bool is_soname_file_name(std::string_view soname) {
  return !soname.empty() && soname.size() <= NAME_MAX && soname != "." && soname != ".." &&
         soname.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

Result<ElfLibrary> read_elf_library(int fd, ImageBudget& budget, std::string_view file) {
  const Meter meter{budget, file};
  unsigned char ident[EI_NIDENT + 4];  // e_ident, e_type, e_machine
  if (!read_at(fd, ident, sizeof ident, 0) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return Error{std::string(kNotElf), ErrorKind::kNotElf};
  if (ident[EI_DATA] != ELFDATA2LSB) return Error{"not little-endian"};
  const auto machine = static_cast<std::uint16_t>(ident[EI_NIDENT + 2] | ident[EI_NIDENT + 3] << 8);
  if (ident[EI_CLASS] == ELFCLASS64 && machine == EM_X86_64)
    return read_class<Elf64>(fd, kLdFlagX8664Lib64, true, meter);
  if (ident[EI_CLASS] == ELFCLASS32 && machine == EM_386)
    return read_class<Elf32>(fd, 0, false, meter);
  return Error{"neither x86-64 nor i386"};
}

}  // namespace gcr
