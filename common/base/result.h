// Errors as values: every fallible function at a module boundary returns a Result.
// An Error carries one human line ("what failed: why (path)"); callers add context with
// wrap() as it travels up, and the executable prints it once. Where code decides on an error,
// it tests the error's kind, never its text.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gcr {

// The errors code decides on; all others are kNone.
enum class ErrorKind : unsigned char {
  kNone,
  kNotElf,  // a file without the ELF magic (ldcache/elf_library.h)
};

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kNone;

  // Prefixes the message with what the caller was doing: "context: message"; the kind stays.
  [[nodiscard]] Error wrap(const std::string& context) const {
    return Error{context + ": " + message, kind};
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result of an operation that yields nothing but may fail.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace gcr
