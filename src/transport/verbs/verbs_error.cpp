#include "ibscope/transport/verbs/verbs_error.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <cstring>

namespace ibscope::verbs {
namespace {

std::string call_message(std::string_view call, std::string_view device, int errno_value,
                         std::string_view context, std::string_view remedy) {
  std::string text = fmt::format("{} on {}", call, device.empty() ? "(no device)" : device);
  if (!context.empty()) text += fmt::format(", {}", context);
  text += fmt::format(": {} (errno {})", std::strerror(errno_value), errno_value);
  if (!remedy.empty()) text += fmt::format(": {}", remedy);
  return text;
}

}  // namespace

VerbsError::VerbsError(std::string_view call, std::string_view device, int errno_value,
                       std::string_view context, std::string_view remedy)
    : Error(ErrorKind::kSystem, call_message(call, device, errno_value, context, remedy)),
      call_(call),
      errno_(errno_value) {}

CompletionError::CompletionError(std::string_view device, std::string_view peer, int status,
                                 std::string_view opcode, std::uint64_t wr_id, std::uint32_t qp_num)
    : Error(ErrorKind::kRemote,
            fmt::format("work completion error on {} towards {}: {} (status {}), posted {}, "
                        "wr_id {}, qp 0x{:x}",
                        device, peer, ibv_wc_status_str(static_cast<ibv_wc_status>(status)), status,
                        opcode, wr_id, qp_num)),
      status_(status) {}

std::string peer_label(int rank, std::string_view host) {
  if (host.empty()) return fmt::format("peer rank {}", rank);
  return fmt::format("peer rank {} (host {})", rank, host);
}

}  // namespace ibscope::verbs
