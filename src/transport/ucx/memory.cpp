#include "ibscope/transport/ucx/memory.hpp"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include "ibscope/core/error.hpp"

namespace ibscope::ucx {

RegisteredMemory::RegisteredMemory(std::shared_ptr<Context> context, void* address,
                                   std::size_t bytes)
    : context_(std::move(context)), address_(address), bytes_(bytes) {
  if (bytes == 0) return;
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = address;
  params.length = bytes;
  const ucs_status_t st = ucp_mem_map(context_->get(), &params, &memh_);
  if (st != UCS_OK) {
    throw Error(ErrorKind::kSystem,
                fmt::format("ucp_mem_map of {} bytes: {}", bytes, ucs_status_string(st)));
  }
}

RegisteredMemory::~RegisteredMemory() {
  if (memh_ != nullptr) ucp_mem_unmap(context_->get(), memh_);
}

}  // namespace ibscope::ucx
