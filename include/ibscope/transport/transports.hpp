#pragma once
/// The data transports a job can run its collectives and point-to-point tests over, and what
/// each needs before it starts. A transport registers itself here (its folder's
/// registration.cpp); the job runtime picks one by name and never names its types. Adding a
/// transport (libfabric, NCCL as a comparison backend): its implementation of transport::Comm
/// and one registration entry (docs/architecture.md, "How to add a transport").

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/topo/rail_choice.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::bootstrap {
class Bootstrap;
}  // namespace ibscope::bootstrap

namespace ibscope::transport {

/// The environment a transport sets for a rank's rail before it starts, and why.
struct EnvPlan {
  EnvVars set;                        ///< what ibscope sets (never a variable the user set)
  std::vector<std::string> notes;     ///< one line per variable set, with the reason
  std::vector<std::string> warnings;  ///< a user setting known to fail, with the remedy
};

struct TransportInfo {
  std::string_view name;         ///< "ucx"
  std::string_view description;  ///< one line for --help and the docs
  /// Plans and applies this process's environment for `rail` (the rank's NIC, or none), before
  /// create(). Local to the rank.
  std::function<EnvPlan(const std::optional<topo::RailChoice>& rail)> prepare;
  /// The communicator over `bootstrap`; collective over every rank.
  std::function<std::unique_ptr<Comm>(bootstrap::Bootstrap& bootstrap)> create;
  /// The transport library's version ("1.13.1"), for the results' environment.
  std::function<std::string()> version;
};

/// Every registered transport; the first is the default.
std::span<const TransportInfo> transports();
/// The transport the job's collectives and tests run over (the default: ucx).
const TransportInfo& data_transport();
/// Looks one up by name; throws UsageError listing the names.
const TransportInfo& find_transport(std::string_view name);

}  // namespace ibscope::transport
