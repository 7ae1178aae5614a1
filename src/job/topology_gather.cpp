#include "ibscope/job/topology_gather.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "ibscope/core/error.hpp"
#include "ibscope/core/rank_ranges.hpp"
#include "ibscope/results/topology.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/host_merge.hpp"
#include "ibscope/transport/verbs/nic_ports.hpp"

namespace ibscope::job {

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
  std::vector<topo::HostTopology> hosts;
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
    hosts = topo::merge_by_host(std::move(per_rank));
  }
  // The others get each host's name and ranks only ("host<TAB>0-7 12"): a whole topology is
  // about 17 kB per host, which to every rank of a 1,344-host job would be 240 GB from rank 0.
  // What they decide from the topology, rank 0 decides and broadcasts (accept's preflight).
  std::string layout;
  for (const auto& h : hosts) {
    layout += fmt::format("{}\t{}\n", h.host, format_rank_ranges(h.ranks));
  }
  const bootstrap::Bytes told = bootstrap.broadcast(
      std::span(reinterpret_cast<const std::byte*>(layout.data()), layout.size()), "topology");
  if (bootstrap.rank() == 0) return hosts;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(told.data()), told.size()));
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) throw RemoteError("malformed host layout from rank 0");
    topo::HostTopology h;
    h.host = line.substr(0, tab);
    h.ranks = parse_rank_ranges(std::string_view(line).substr(tab + 1));
    hosts.push_back(std::move(h));
  }
  return hosts;
}

}  // namespace ibscope::job
