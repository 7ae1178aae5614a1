#pragma once
/// Which UCX variables ibscope sets for a rank before UCX starts, and why. Pure: the rank's
/// UCX_* environment and its rail (topo/rail_choice.hpp) in, the variables to set and the
/// banner lines out; unit-tested (tests/unit/test_ucx_env_plan.cpp). A variable the user set
/// always wins; ibscope only warns when it is known to fail.
///
/// Rules (docs/ucx-transports.md says what a user gets and how to override):
///   1. Rail: UCX_NET_DEVICES = "<nic>:<port>[,<netdev>]" unless set: the rank's UCX traffic
///      goes through its own NIC, and UCX's tcp (wire-up, keepalive, or a user's UCX_TLS=tcp)
///      through that NIC's interface only.
///   2. Soft-RoCE: on an rdma_rxe rail with UCX_TLS unset, UCX_TLS=^ud_verbs,sm. With UCX 1.13
///      ud_verbs on rxe stalls at the first message between hosts, and as rc_verbs' wire-up
///      transport it aborts the process in ucp_wireup (assertion "got REQ message") or in
///      uct_ud_ep_pending_purge at close (rxe's UD receive path over a RoCE v2 IPv4 GID). Without
///      it UCX wires rc_verbs up over tcp, but only where tcp also holds a lane: between
///      same-host ranks shared memory takes every other lane and ucp_ep_create fails with "no
///      auxiliary transport", so shared memory goes too and same-host pairs use rc_verbs
///      through rxe's loopback. A user's UCX_TLS that lets ud_verbs in on such a rail gets a
///      warning.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/topo/rail_choice.hpp"
#include "ibscope/transport/transports.hpp"

namespace ibscope::ucx {

/// UCX_TLS on a Soft-RoCE rail when the user set none (rule 2).
inline constexpr std::string_view kSoftRoceTls = "^ud_verbs,sm";

using transport::EnvPlan;

/// The rules above. `ucx_env`: the process's UCX_* variables.
EnvPlan plan_ucx_env(const EnvVars& ucx_env, const std::optional<topo::RailChoice>& rail);

/// Whether UCX_TLS `tls` lets UCX use ud_verbs: unset/empty, "all", "ib", "ud", "ud_verbs", or an
/// exclusion list ("^...") that names none of "ud", "ud_verbs", "ib".
bool tls_allows_ud_verbs(std::string_view tls);

/// Whether the comma list `tls` (a UCX_TLS value, without a leading '^') names `name` as one
/// of its items ("rc,ud" names "ud", not "u").
bool tls_names(std::string_view tls, std::string_view name);

/// Sets every variable of `plan.set` in this process's environment (before ucp_init).
void apply(const EnvPlan& plan);

}  // namespace ibscope::ucx
