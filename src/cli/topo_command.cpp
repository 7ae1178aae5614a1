#include "ibscope/cli/topo_command.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/output/topology_table.hpp"
#include "ibscope/results/topology.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/host_merge.hpp"
#include "ibscope/transport/verbs/nic_ports.hpp"

namespace ibscope::cli {

topo::HostTopology local_topology(const std::string& host, int rank) {
  topo::HostTopology h = topo::discover_host_topology(host);
  h.ranks = {rank};
  verbs::fill_rdma_ports(h);
  return h;
}

std::vector<topo::HostTopology> gather_topology(bootstrap::Bootstrap& bootstrap) {
  const std::string mine = results::encode_host_topology(
      local_topology(bootstrap.host(bootstrap.rank()), bootstrap.rank()));
  const auto* bytes = reinterpret_cast<const std::byte*>(mine.data());
  const auto all = bootstrap.allgather(std::span<const std::byte>(bytes, mine.size()), "topology");
  std::vector<topo::HostTopology> per_rank;
  for (int r = 0; r < bootstrap.size(); ++r) {
    const bootstrap::Bytes& b = all[static_cast<std::size_t>(r)];
    const std::string text(reinterpret_cast<const char*>(b.data()), b.size());
    try {
      per_rank.push_back(results::decode_host_topology(text, bootstrap.describe(r)));
    } catch (const std::exception& e) {
      throw RemoteError(
          fmt::format("malformed topology from {}: {}", bootstrap.describe(r), e.what()));
    }
  }
  return topo::merge_by_host(std::move(per_rank));
}

int topo_body(JobContext& ctx) {
  const auto hosts = gather_topology(ctx.bootstrap);
  if (ctx.results != nullptr) ctx.results->topology = hosts;
  if (ctx.table_out != nullptr) output::print_topology(ctx.table_out, hosts);
  return 0;
}

}  // namespace ibscope::cli
