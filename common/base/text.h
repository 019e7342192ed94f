// Small string helpers shared by the parsers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcr {

// A view into `s`: trimming a temporary std::string would leave it dangling.
[[nodiscard]] std::string_view trim(std::string_view s);
std::string_view trim(std::string&& s) = delete;
// The parts are views into `s`: splitting a temporary std::string would leave them dangling.
[[nodiscard]] std::vector<std::string_view> split(std::string_view s, char sep);
std::vector<std::string_view> split(std::string&& s, char sep) = delete;
[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view sep);
[[nodiscard]] std::string to_lower(std::string_view s);
[[nodiscard]] bool iequals(std::string_view a, std::string_view b);

// Parses a plain unsigned decimal ("0".."18446744073709551615"); no sign, no spaces.
[[nodiscard]] std::optional<std::uint64_t> parse_decimal(std::string_view s);
// Parses an unsigned integer as Go's strconv.ParseUint with base 0 reads one (runc's flags, the
// YAML library of CDI specs): 0x hexadecimal, 0o or a leading 0 octal, 0b binary, else
// decimal; no sign, no underscores, no spaces.
[[nodiscard]] std::optional<std::uint64_t> parse_go_unsigned(std::string_view s);
// Parses 1 to `max_digits` (at most 8) hexadecimal digits, either case; no prefix, no spaces.
[[nodiscard]] std::optional<std::uint32_t> parse_hex(std::string_view s, std::size_t max_digits);

// Returns s with control characters escaped (\n, \x1b, ...) and cut to max_len bytes, so a
// value from a container cannot forge or flood log lines.
[[nodiscard]] std::string printable(std::string_view s, std::size_t max_len = 512);

// "`s`" with s made printable: how messages quote a value.
[[nodiscard]] std::string quote(std::string_view s, std::size_t max_len = 512);

// True when `path` equals `dir` or lies below it, comparing whole components
// ("/a/b" is under "/a", "/ab" is not).
[[nodiscard]] bool path_is_under(std::string_view path, std::string_view dir);

// Lexically cleans an absolute or relative path: removes "." components, duplicate and
// trailing slashes, and resolves ".." against preceding components (never above "/").
[[nodiscard]] std::string clean_path(std::string_view path);

// "/a/b" -> "/a", "/a" -> "/", "a" -> ".".
[[nodiscard]] std::string dirname_of(const std::string& path);
// The same, a view of `path` (or of "."), for a lookup that needs no string of its own.
[[nodiscard]] std::string_view dirname_view(std::string_view path);
// "/a/b" -> "b".
[[nodiscard]] std::string basename_of(const std::string& path);
// The entry `name` of the directory `dir` ("/a" + "b" -> "/a/b"; "/" + "b" -> "/b").
[[nodiscard]] std::string child_path(std::string_view dir, std::string_view name);
// The last non-empty line of a program's output, trimmed.
[[nodiscard]] std::string last_line(std::string_view text);

// Joins a root directory and an absolute in-root path ("/a" + "/b" -> "/a/b"; "/" + "/b" -> "/b").
[[nodiscard]] std::string join_root(std::string_view root, std::string_view path);

}  // namespace gcr
