#include "ibscope/cli/topo_command.hpp"

#include <fmt/format.h>

#include <cstdlib>

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
  // To rank 0, which merges them by host; then the merged list (one entry per host, not per
  // rank) to every rank: O(n x hosts) bytes at the root rather than O(n^2) (docs/scale.md).
  const auto all = bootstrap.gather(std::span<const std::byte>(bytes, mine.size()), "topology");
  std::string merged;
  if (bootstrap.rank() == 0) {
    std::vector<topo::HostTopology> per_rank;
    for (int r = 0; r < static_cast<int>(all.size()); ++r) {
      const bootstrap::Bytes& b = all[static_cast<std::size_t>(r)];
      const std::string text(reinterpret_cast<const char*>(b.data()), b.size());
      try {
        per_rank.push_back(results::decode_host_topology(text, bootstrap.describe(r)));
      } catch (const std::exception& e) {
        throw RemoteError(
            fmt::format("malformed topology from {}: {}", bootstrap.describe(r), e.what()));
      }
    }
    for (const auto& h : topo::merge_by_host(std::move(per_rank))) {
      const std::string text = results::encode_host_topology(h);
      merged += fmt::format("{}\n{}", text.size(), text);
    }
  }
  const bootstrap::Bytes told = bootstrap.broadcast(
      std::span(reinterpret_cast<const std::byte*>(merged.data()), merged.size()), "topology");
  const std::string_view text(reinterpret_cast<const char*>(told.data()), told.size());
  std::vector<topo::HostTopology> hosts;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto eol = text.find('\n', pos);
    const std::size_t n =
        eol == std::string_view::npos ? 0 : std::strtoull(text.data() + pos, nullptr, 10);
    if (eol == std::string_view::npos || n > text.size() - eol - 1) {
      throw RemoteError("malformed merged topology from rank 0");
    }
    hosts.push_back(
        results::decode_host_topology(std::string(text.substr(eol + 1, n)), "rank 0's merge"));
    pos = eol + 1 + n;
  }
  return hosts;
}

int topo_body(JobContext& ctx) {
  const auto hosts = gather_topology(ctx.bootstrap);
  if (ctx.results != nullptr) ctx.results->topology = hosts;
  if (ctx.table_out != nullptr) output::print_topology(ctx.table_out, hosts);
  return 0;
}

}  // namespace ibscope::cli
