#include "ibscope/transport/ucx/context.hpp"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include <array>
#include <cstdlib>
#include <span>

#include "ibscope/core/error.hpp"
#include "ibscope/transport/ucx/env_plan.hpp"

namespace ibscope::ucx {

void destroy_context(ucp_context* context) noexcept { ucp_cleanup(context); }

bool uses_shared_memory(const char* ucx_tls) noexcept {
  if (ucx_tls == nullptr || *ucx_tls == '\0') return true;
  std::string_view tls(ucx_tls);
  const bool exclusion = tls.front() == '^';  // shared memory stays unless named
  if (exclusion) tls.remove_prefix(1);
  static constexpr std::array<std::string_view, 7> kIncluding = {"all",   "sm",   "shm",  "mm",
                                                                 "posix", "sysv", "xpmem"};
  static constexpr std::array<std::string_view, 3> kExcluding = {"sm", "shm", "mm"};
  const std::span<const std::string_view> names =
      exclusion ? std::span<const std::string_view>(kExcluding)
                : std::span<const std::string_view>(kIncluding);
  for (std::string_view name : names) {
    if (tls_names(tls, name)) return !exclusion;
  }
  return exclusion;
}

Context::Context(std::size_t estimated_endpoints) {
  // Endpoints use UCP_ERR_HANDLING_MODE_PEER, and UCX 1.13 offers shared memory (posix, sysv)
  // to such endpoints only when MM error handling is exposed; without it same-host ranks would
  // fall back to TCP loopback. A value the user set wins. Not set when UCX_TLS leaves shared
  // memory out: UCX would then print an "unused env variable" warning on stdout of every rank.
  if (uses_shared_memory(std::getenv("UCX_TLS"))) ::setenv("UCX_MM_ERROR_HANDLING", "y", 0);
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) {
    throw Error(ErrorKind::kSystem,
                fmt::format("ucp_config_read: {} (check the UCX_* environment variables)",
                            ucs_status_string(st)));
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA;
  params.estimated_num_eps = estimated_endpoints;
  ucp_context_h ctx = nullptr;
  st = ucp_init(&params, config, &ctx);
  ucp_config_release(config);
  if (st != UCS_OK) {
    throw Error(ErrorKind::kSystem,
                fmt::format("ucp_init: {} (UCX_TLS={})", ucs_status_string(st),
                            std::getenv("UCX_TLS") ? std::getenv("UCX_TLS") : "<default>"));
  }
  handle_ = Handle<ucp_context*, destroy_context>(ctx);
}

std::string Context::version() {
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

bool Context::supports_cuda_memory() const {
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(handle_.get(), &attr) != UCS_OK) return false;
  return (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
}

}  // namespace ibscope::ucx
