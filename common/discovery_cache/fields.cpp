#include "discovery_cache/fields.h"

#include <limits>

namespace gcr {

void FieldWriter::number(std::uint64_t value) {
  out_ += std::to_string(value);
  out_ += ',';
}

void FieldWriter::signed_number(std::int64_t value) {
  out_ += std::to_string(value);
  out_ += ',';
}

void FieldWriter::text(std::string_view value) {
  out_ += std::to_string(value.size());
  out_ += ':';
  out_ += value;
}

constexpr std::size_t kDigitsThatFit = std::numeric_limits<std::uint64_t>::digits10;

bool FieldReader::digits(std::uint64_t& value, char end) {
  value = 0;
  std::size_t i = 0;
  for (; i < data_.size() && data_[i] >= '0' && data_[i] <= '9'; ++i) {
    const auto digit = static_cast<std::uint64_t>(data_[i] - '0');
    // 19 digits always fit: only a longer number can overflow.
    if (i >= kDigitsThatFit && value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      break;
    value = value * 10 + digit;
  }
  if (i == 0 || i >= data_.size() || data_[i] != end) {
    data_ = {};
    return false;
  }
  data_.remove_prefix(i + 1);
  return true;
}

bool FieldReader::number(std::uint64_t& value) {
  return digits(value, ',');
}

bool FieldReader::signed_number(std::int64_t& value) {
  const bool negative = !data_.empty() && data_.front() == '-';
  if (negative) data_.remove_prefix(1);
  std::uint64_t magnitude = 0;
  if (!digits(magnitude, ',') ||
      magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    data_ = {};
    return false;
  }
  value = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
  return true;
}

bool FieldReader::text(std::string& value) {
  std::uint64_t size = 0;
  if (!digits(size, ':') || size > data_.size()) {
    data_ = {};
    return false;
  }
  value.assign(data_.substr(0, size));
  data_.remove_prefix(size);
  return true;
}

bool FieldReader::count(std::size_t& value) {
  std::uint64_t n = 0;
  if (!number(n) || n > data_.size()) {
    data_ = {};
    return false;
  }
  value = static_cast<std::size_t>(n);
  return true;
}

}  // namespace gcr
