// The discovery cache's file format: numbers ("123," or "-5,") and texts ("<bytes>:<text>"),
// one after the other, so that any name reads back exactly. The reader never trusts a length
// beyond the bytes it has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace gcr {

class FieldWriter {
 public:
  void number(std::uint64_t value);
  void signed_number(std::int64_t value);
  void text(std::string_view value);
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class FieldReader {
 public:
  explicit FieldReader(std::string_view data) : data_(data) {}
  // Each false, leaving the reader failed, when what follows is not a field of that kind.
  bool number(std::uint64_t& value);
  bool signed_number(std::int64_t& value);
  bool text(std::string& value);
  // A count of entries that each take at least one more byte: no more than the bytes left.
  bool count(std::size_t& value);
  [[nodiscard]] bool at_end() const { return data_.empty(); }

 private:
  bool digits(std::uint64_t& value, char end);
  std::string_view data_;
};

}  // namespace gcr
