#include "ibscope/cli/topo_command.hpp"

#include "ibscope/job/topology_gather.hpp"
#include "ibscope/output/topology_table.hpp"

namespace ibscope::cli {

int topo_body(job::JobContext& ctx) {
  const auto hosts = job::gather_topology(ctx.bootstrap);
  if (ctx.results != nullptr) ctx.results->topology = hosts;
  if (ctx.table_out != nullptr) output::print_topology(ctx.table_out, hosts);
  return 0;
}

}  // namespace ibscope::cli
