#pragma once
/// A port's state, typed: the one parser of the text ibv_query_port (via ibv_port_state_str)
/// and sysfs (topo/rdma_sysfs.hpp) give, so no layer compares "ACTIVE" as a string.

#include <string_view>

namespace ibscope::topo {

/// A port's state, as ibv_query_port and sysfs report it (IB spec's PortState).
enum class PortState { kUnknown, kNop, kDown, kInit, kArmed, kActive, kActiveDefer };

/// Reads "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER" in any case, with or without sysfs's
/// number ("4: ACTIVE") or libibverbs' spelling ("active defer", "no state change (NOP)").
/// Anything else: kUnknown.
PortState parse_port_state(std::string_view text) noexcept;
/// "ACTIVE", "DOWN", ... as ibstat prints them; kUnknown: "UNKNOWN".
std::string_view name_of(PortState state) noexcept;

}  // namespace ibscope::topo
