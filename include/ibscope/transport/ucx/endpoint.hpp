#pragma once
/// UCX endpoint (ucp_ep_h) to one peer rank. With peer error handling
/// (UCP_ERR_HANDLING_MODE_PEER) a dead peer turns into an error status on this endpoint instead
/// of a hang.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/transport/ucx/worker.hpp"

struct ucp_ep;

namespace ibscope::ucx {

class Endpoint {
 public:
  /// Connects to `peer_rank` at `remote_address` (from the bootstrap). Throws SystemError.
  Endpoint(std::shared_ptr<Worker> worker, int peer_rank, const bootstrap::Bytes& remote_address,
           bool peer_error_handling);
  /// Force-closes if close() was not called. noexcept.
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ucp_ep* get() const noexcept { return ep_; }
  int peer() const noexcept { return peer_; }
  /// UCS_OK (0) while healthy; the status the error callback reported otherwise.
  int error_status() const noexcept { return error_status_; }
  bool peer_error_handling() const noexcept { return peer_error_handling_; }
  /// Which UCX transports carry which traffic to this peer, e.g. "tag: posix/memory,
  /// cma/memory" (parsed from ucp_ep_print_info).
  std::string transports() const;
  /// Closes, progressing the worker for at most `timeout_s`. A flush close waits for outstanding
  /// operations; a forced close (also used when the peer failed) completes them with
  /// UCS_ERR_CANCELED, which is the only safe end on an error path. Never throws.
  void close(double timeout_s, bool force) noexcept;

 private:
  std::shared_ptr<Worker> worker_;
  int peer_;
  ucp_ep* ep_ = nullptr;
  int error_status_ = 0;
  bool peer_error_handling_;
};

/// Summarises ucp_ep_print_info text: the distinct "transport/device" pairs per lane purpose.
std::string summarize_ep_info(const std::string& print_info_text);

/// Whether a summarize_ep_info() text names a NIC transport (rc_, dc_, ud_ over verbs or
/// mlx5), whose user buffers UCX registers and pins: they count against RLIMIT_MEMLOCK.
/// Pure.
bool uses_nic_registration(std::string_view transports_summary);

/// The RDMA devices ("mlx5_0:1", "rxe0:1") of a summarize_ep_info() text's NIC lanes (rc_, dc_,
/// ud_ transports), distinct, in order of appearance; the wire-up's auxiliary transport ("{...}")
/// is not a lane. Pure.
std::vector<std::string> lane_devices(std::string_view transports_summary);

}  // namespace ibscope::ucx
