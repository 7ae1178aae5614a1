#include "ibscope/accept/links_transport.hpp"

#include <fmt/format.h>

#include <span>
#include <string>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::accept {

Preflight agree_on_preflight(bootstrap::Bootstrap& boot,
                             const std::vector<topo::HostTopology>& hosts, std::string_view what) {
  // Rank 0 holds the whole topology (the others each host's name and ranks): it judges the
  // preflight, and every rank takes its verdict on RDMA.
  Preflight pre = check_preflight(hosts);
  const std::string mine =
      boot.rank() == 0 ? fmt::format("{}{}", pre.rdma_everywhere ? '1' : '0', pre.no_rdma_reason)
                       : std::string();
  const bootstrap::Bytes told =
      boot.broadcast(std::span(reinterpret_cast<const std::byte*>(mine.data()), mine.size()), what);
  if (told.empty()) throw RemoteError(fmt::format("{}: malformed message from rank 0", what));
  pre.rdma_everywhere = told[0] == std::byte{'1'};
  pre.no_rdma_reason.assign(reinterpret_cast<const char*>(told.data()) + 1, told.size() - 1);
  return pre;
}

AcceptTransport links_transport(AcceptTransport requested, const Preflight& pre) noexcept {
  if (requested != AcceptTransport::kAuto) return requested;
  return pre.rdma_everywhere ? AcceptTransport::kVerbs : AcceptTransport::kUcx;
}

}  // namespace ibscope::accept
