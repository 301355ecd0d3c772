// Copyright 2026 The neardup Authors.
//
// Status and Result<T>: how every fallible call in neardup reports failure.
// No exception crosses the public API; errors from ICU, OpenCC, SQLite, libzip
// and poppler are turned into a Status at the module's edge, with the file and
// the reason in the message.
//
// Thread safety: a Status is a value; distinct objects may be used from
// distinct threads without synchronization.
//
//   neardup::Status s = segmenter->LoadUserDict(path);
//   if (!s.ok()) { std::cerr << s.ToString() << "\n"; return 1; }
//
//   neardup::Result<std::unique_ptr<Segmenter>> seg = Segmenter::Open(options);
//   if (!seg.ok()) return seg.status();
//   (*seg)->Cut(text, &tokens);

#ifndef NEARDUP_STATUS_H_
#define NEARDUP_STATUS_H_

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace neardup {

class [[nodiscard]] Status {
 public:
  enum class Code : int {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kInvalidArgument = 3,
    kIOError = 4,
    kNotSupported = 5,
    kResourceExhausted = 6,
  };

  // Creates a success status.
  Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(Code::kInvalidArgument, msg);
  }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg); }
  static Status NotSupported(std::string_view msg) { return Status(Code::kNotSupported, msg); }
  static Status ResourceExhausted(std::string_view msg) {
    return Status(Code::kResourceExhausted, msg);
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsResourceExhausted() const { return code_ == Code::kResourceExhausted; }

  Code code() const { return code_; }
  // The message alone, without the code's name.
  const std::string& message() const { return message_; }
  // "OK", or "<Code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}

  Code code_ = Code::kOk;
  std::string message_;
};

namespace internal {
// Prints "neardup: Result::value() on an error: <status>" and aborts.
[[noreturn]] void DieOnBadResultAccess(const Status& status);
}  // namespace internal

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  // REQUIRES: !status.ok()
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok());
  }
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status::OK() : std::get<Status>(data_); }

  // REQUIRES: ok(). On an error it is a checked failure: the message and the
  // status are printed and the process aborts (never undefined behaviour).
  T& value() & {
    CheckOk();
    return std::get<T>(data_);
  }
  const T& value() const& {
    CheckOk();
    return std::get<T>(data_);
  }
  T&& value() && {
    CheckOk();
    return std::get<T>(std::move(data_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const {
    if (!ok()) internal::DieOnBadResultAccess(std::get<Status>(data_));
  }

  std::variant<Status, T> data_;
};

}  // namespace neardup

// Returns from the enclosing function if `expr` yields a non-OK Status.
#define NEARDUP_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::neardup::Status _neardup_status = (expr);        \
    if (!_neardup_status.ok()) return _neardup_status; \
  } while (0)

// Evaluates `rexpr` (a Result<T>); on error returns its Status from the
// enclosing function, else moves the value into `lhs`, which may declare a
// variable:
//   NEARDUP_ASSIGN_OR_RETURN(auto index, LoadIndex(path));
#define NEARDUP_ASSIGN_OR_RETURN(lhs, rexpr) \
  NEARDUP_ASSIGN_OR_RETURN_IMPL_(NEARDUP_STATUS_CONCAT_(_neardup_result_, __LINE__), lhs, rexpr)

#define NEARDUP_ASSIGN_OR_RETURN_IMPL_(result, lhs, rexpr) \
  auto result = (rexpr);                                   \
  if (!result.ok()) return result.status();                \
  lhs = std::move(result).value()

#define NEARDUP_STATUS_CONCAT_INNER_(a, b) a##b
#define NEARDUP_STATUS_CONCAT_(a, b) NEARDUP_STATUS_CONCAT_INNER_(a, b)

#endif  // NEARDUP_STATUS_H_
