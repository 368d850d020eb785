// Errors are values in RadixChat: no exception crosses a public API.
//
// Status carries a code for the normal failure states callers branch on (a
// full KV pool is normal under load) and a one-line message for the user.
// Result<T> is a Status or a value.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace rc {

enum class StatusCode {
  ok,
  invalid_argument,  // bad input from the caller: flag, text, token id, JSON
  not_found,         // missing file or id
  corrupt_data,      // a file exists but its contents are wrong (GGUF, database)
  unsupported,       // a valid file using a feature we do not implement
  no_pages,          // the KV pool cannot hold the request even after eviction
  too_long,          // prompt or request exceeds the context
  cancelled,
  permission_denied,  // the operating system refused access to a file or folder
  internal,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::ok; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "code_name: message", for logs and stderr.
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rc
