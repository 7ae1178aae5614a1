#pragma once
/// Typed errors. Every failure that reaches the user is one of these; the CLI maps the kind to
/// an exit status (usage -> 2, everything else -> 1) and prints what() as one line.

#include <stdexcept>
#include <string>
#include <string_view>

namespace ibscope {

enum class ErrorKind {
  kUsage,         ///< bad flag, value or input file: the user can fix the command line
  kSystem,        ///< an OS or library call failed (errno or library status attached)
  kRemote,        ///< a peer rank failed, vanished or refused us
  kTimeout,       ///< a deadline passed; the message names who never arrived
  kVerification,  ///< a collective produced wrong data
  kInterrupted,   ///< a signal (SIGINT, SIGTERM, ...) stopped the run (core/interrupt.hpp)
};

std::string_view to_string(ErrorKind kind) noexcept;

/// Exit status for an error kind: 2 for usage, 1 for every measurement failure (an interrupted
/// run exits 128 + the signal: InterruptedError carries it).
int exit_status(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ErrorKind::kUsage, message) {}
};

/// An OS call failed; the message gets strerror(errno) appended.
class SystemError : public Error {
 public:
  SystemError(std::string_view what, int errno_value);
  /// "`what`: strerror (errno N); `then`": what follows from the failure (where data went).
  SystemError(std::string_view what, int errno_value, std::string_view then);
  int errno_value() const noexcept { return errno_; }

 private:
  int errno_;
};

class RemoteError : public Error {
 public:
  explicit RemoteError(const std::string& message) : Error(ErrorKind::kRemote, message) {}
};

class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& message) : Error(ErrorKind::kTimeout, message) {}
};

class VerificationError : public Error {
 public:
  explicit VerificationError(const std::string& message)
      : Error(ErrorKind::kVerification, message) {}
};

}  // namespace ibscope
