//===- Status.h - Errors as values for the tfc runtime ----------*- C++ -*-===//
//
// The runtime is linked into generated code and into emitted standalone
// sources, which may be compiled with -fno-exceptions and must never abort on
// bad input (a corrupt checkpoint is a user error, not a crash). So every
// fallible runtime function returns a Status or an Expected<T> instead of
// throwing, exiting or asserting.
//
// This deliberately mirrors the shape of llvm::Error / llvm::Expected (which
// the compiler side uses) without depending on LLVM: the runtime must build
// with nothing but a C++17 compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_STATUS_H
#define TFC_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tfc::rt {

/// Success, or a human-readable error message. Messages follow the
/// compiler-diagnostic style ("model.safetensors: tensor 'wte.weight': ...",
/// lower-case, no trailing period) so that the CLI can print them as-is after
/// "error: ".
class [[nodiscard]] Status {
public:
  /// A default-constructed Status is success.
  Status() = default;

  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.msg = std::move(message);
    return s;
  }

  bool ok() const { return !failed; }
  /// Empty for success.
  const std::string &message() const { return msg; }

  /// Returns this error with "<context>: " put in front of its message; a
  /// success stays a success. Used to add the file name or tensor name as an
  /// error travels up.
  Status withContext(const std::string &context) const {
    if (!failed)
      return *this;
    return error(context + ": " + msg);
  }

private:
  bool failed = false;
  std::string msg;
};

/// A value of type T or an error Status, like llvm::Expected<T> or
/// absl::StatusOr<T>. Accessing the value of an error is a programming mistake
/// (checked by assert in debug builds); always test ok() first.
template <typename T> class [[nodiscard]] Expected {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>,
                "Expected<Status> is ambiguous; return Status instead");

public:
  /// Implicit so that `return value;` works in functions returning
  /// Expected<T>.
  Expected(T value) : val(std::move(value)) {}

  /// Implicit so that `return Status::error(...);` works. An ok Status carries
  /// no value, so it is turned into an error instead of producing an
  /// Expected that is neither a value nor an error.
  Expected(Status status) : st(std::move(status)) {
    if (st.ok())
      st = Status::error("internal error: Expected<T> built from a success "
                         "Status without a value");
  }

  bool ok() const { return val.has_value(); }
  explicit operator bool() const { return ok(); }

  /// The error; success when ok().
  const Status &status() const { return st; }
  /// The error message; empty when ok().
  const std::string &message() const { return st.message(); }

  T &value() & {
    assert(ok() && "value() of an error Expected");
    return *val;
  }
  const T &value() const & {
    assert(ok() && "value() of an error Expected");
    return *val;
  }
  T &&value() && {
    assert(ok() && "value() of an error Expected");
    return std::move(*val);
  }

  /// Moves the value out (for `auto x = std::move(e).take();` style use).
  T take() {
    assert(ok() && "take() of an error Expected");
    return std::move(*val);
  }

  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  std::optional<T> val;
  Status st;
};

} // namespace tfc::rt

/// Returns early from the enclosing function (which must return Status or
/// Expected<U>) when `expr` (a Status) is an error.
#define TFC_RT_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::tfc::rt::Status tfcRtStatus_ = (expr);                                   \
    if (!tfcRtStatus_.ok())                                                    \
      return tfcRtStatus_;                                                     \
  } while (false)

#endif // TFC_RUNTIME_STATUS_H
