#pragma once
/// Errors from libibverbs, carrying which call failed, on which device, towards which peer,
/// and errno or the work completion status, so one line tells an operator what broke.

#include <cstdint>
#include <string>
#include <string_view>

#include "ibscope/core/error.hpp"

namespace ibscope::verbs {

/// A verbs call failed (nullptr + errno from create calls, or a returned errno value).
/// what(): "<call> on <device>[, <context>]: <strerror> (errno N)[: <remedy>]".
class VerbsError : public Error {
 public:
  VerbsError(std::string_view call, std::string_view device, int errno_value,
             std::string_view context = {}, std::string_view remedy = {});
  const std::string& call() const noexcept { return call_; }
  int errno_value() const noexcept { return errno_; }

 private:
  std::string call_;
  int errno_;
};

/// A work completion came back with a status other than IBV_WC_SUCCESS.
/// what(): "work completion error on <device> towards <peer>: <ibv_wc_status_str> (status N),
/// posted <op>, wr_id N, qp 0x..". The operation is what the caller posted: an error
/// completion's own opcode field is undefined.
class CompletionError : public Error {
 public:
  CompletionError(std::string_view device, std::string_view peer, int status,
                  std::string_view opcode, std::uint64_t wr_id, std::uint32_t qp_num);
  int status() const noexcept { return status_; }

 private:
  int status_;
};

/// The RDMA preconditions of this host are not met (no device, no provider, port down,
/// locked-memory limit too low). what() is one line that ends with the remedy.
class EnvironmentError : public Error {
 public:
  explicit EnvironmentError(const std::string& message) : Error(ErrorKind::kSystem, message) {}
};

/// "peer rank 3 (host node07)".
std::string peer_label(int rank, std::string_view host);

}  // namespace ibscope::verbs
