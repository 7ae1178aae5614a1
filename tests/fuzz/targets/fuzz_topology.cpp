// Topology JSON (src/results/topology_json.hpp): what each rank sends over the bootstrap for
// `ibscope topo` (one host object, or here an array of them, one per rank, then merged by host
// as rank 0 does) and the "topology" section of a results file ({"hosts": [...]}). Expected
// rejection: UsageError naming the source and field. Property: what was accepted, written out
// again, is accepted again with the same number of hosts.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/topo/host_merge.hpp"
#include "results/topology_json.hpp"

namespace topo = ibscope::topo;
namespace results = ibscope::results;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto doc = ibscope::fuzz::parse_json(ibscope::fuzz::as_text(data, size));
  if (!doc) return 0;
  std::vector<topo::HostTopology> hosts;
  try {
    if (doc->is_array()) {
      std::vector<topo::HostTopology> per_rank;
      for (const auto& rank : *doc)
        per_rank.push_back(results::host_topology_from_json(rank, "rank"));
      hosts = topo::merge_by_host(std::move(per_rank));
    } else if (doc->is_object() && doc->contains("hosts")) {
      hosts = results::topology_from_section_json(*doc, "fuzz.json");
    } else {
      hosts.push_back(results::host_topology_from_json(*doc, "rank 0"));
    }
  } catch (const ibscope::UsageError&) {
    return 0;
  }
  const auto section = nlohmann::json::parse(results::topology_section_json(hosts).dump());
  IBSCOPE_FUZZ_CHECK(results::topology_from_section_json(section, "rewritten").size() ==
                     hosts.size());
  return 0;
}
