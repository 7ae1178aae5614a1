#pragma once
/// UCX context (ucp_context_h): reads the UCX_* environment, enables the features ibscope uses
/// (tag matching, RMA), and says which memory types this UCX supports.

#include <cstddef>
#include <string>

#include "ibscope/core/handle.hpp"

struct ucp_context;

namespace ibscope::ucx {

/// Whether a UCX_TLS value (nullptr: unset) lets UCX use shared memory transports.
bool uses_shared_memory(const char* ucx_tls) noexcept;

void destroy_context(ucp_context* context) noexcept;

class Context {
 public:
  /// `estimated_endpoints`: job size, a hint for UCX's resource sizing. Throws SystemError
  /// with ucs_status_string when UCX cannot initialise.
  explicit Context(std::size_t estimated_endpoints);

  ucp_context* get() const noexcept { return handle_.get(); }
  /// "1.13.1": the UCX library version actually loaded.
  static std::string version();
  /// True when UCX can pass CUDA device memory directly (ucp_context_query memory types).
  bool supports_cuda_memory() const;

 private:
  Handle<ucp_context*, destroy_context> handle_;
};

}  // namespace ibscope::ucx
