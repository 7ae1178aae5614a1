// The UCX transport's entry in the registry of data transports (transport/transports.hpp).

#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/transport/transports.hpp"
#include "ibscope/transport/ucx/comm.hpp"
#include "ibscope/transport/ucx/context.hpp"
#include "ibscope/transport/ucx/env_plan.hpp"

namespace ibscope::transport {

TransportInfo ucx_transport() {
  return TransportInfo{
      .name = "ucx",
      .description = "UCX tag matching (rc/dc verbs, shared memory, tcp: whatever UCX picks)",
      .prepare =
          [](const std::optional<topo::RailChoice>& rail) {
            EnvPlan plan = ucx::plan_ucx_env(process_env_with_prefix("UCX_"), rail);
            ucx::apply(plan);
            return plan;
          },
      .create = [](bootstrap::Bootstrap& bootstrap) -> std::unique_ptr<Comm> {
        return std::make_unique<ucx::Comm>(bootstrap);
      },
      .version = [] { return ucx::Context::version(); },
  };
}

}  // namespace ibscope::transport
