// What ldconfig reads from a shared library to index it: its soname and the cache flags its
// ELF class, machine and glibc dependency give. Only the forms the in-process cache update
// handles exactly are accepted (x86-64, and i386 without libc5); anything else is an error, and
// the caller leaves the work to ldconfig.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "ldcache/image_budget.h"

namespace gcr {

struct ElfLibrary {
  std::optional<std::string> soname;  // DT_SONAME
  std::int32_t flags = 0;             // kLdFlag* as ldconfig would set them
};

// Reads the library `file` open at `fd`, charging `budget` for the bytes read and the names
// looked up (the string table is read once, the part holding the names; a budget's error names
// `file`, the others do not). "not an ELF file", of kind ErrorKind::kNotElf, for anything without
// the ELF magic.
[[nodiscard]] Result<ElfLibrary> read_elf_library(int fd, ImageBudget& budget,
                                                  std::string_view file);

inline constexpr std::string_view kNotElf = "not an ELF file";

// Whether `soname` can name a file in a folder, as a soname link is made: not empty, at most
// NAME_MAX bytes, no `/` or NUL, not `.` or `..`.
[[nodiscard]] bool is_soname_file_name(std::string_view soname);

// The descriptor of the first note of `owner` in the 64-bit ELF file's SHT_NOTE section named
// `section`, NULs around it removed; nothing when the file has no such section or note. Reads
// the section headers, the section names of the notes and the note section (at most
// kMaxNoteSectionBytes), charging `budget` in the name of `file`.
[[nodiscard]] Result<std::optional<std::string>> read_elf_note(int fd, std::string_view section,
                                                               std::string_view owner,
                                                               ImageBudget& budget,
                                                               std::string_view file);

inline constexpr std::size_t kMaxNoteSectionBytes = 4096;

}  // namespace gcr
