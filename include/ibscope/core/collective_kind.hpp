#pragma once
/// The collectives ibscope measures, as a vocabulary every layer may name (results rows, the
/// model's cost formulas, the CLI): their names and nccl-tests' bus bandwidth factors. The
/// algorithms and their buffer conventions are in collectives/collective.hpp.

#include <optional>
#include <string_view>

namespace ibscope {

enum class Collective { kAllreduce, kReduceScatter, kAllgather, kBroadcast };
inline constexpr Collective kAllCollectives[] = {Collective::kAllreduce, Collective::kReduceScatter,
                                                 Collective::kAllgather, Collective::kBroadcast};

/// "allreduce", "reduce_scatter", "allgather", "broadcast".
std::string_view name_of(Collective c) noexcept;
/// The collective called `name` (as name_of() spells it), or nullopt.
std::optional<Collective> collective_named(std::string_view name) noexcept;
/// nccl-tests bus bandwidth factor: 2(p-1)/p for all-reduce, (p-1)/p for reduce-scatter and
/// all-gather, 1 for broadcast (0 for p == 1: nothing crosses a link).
double busbw_factor(Collective c, int p) noexcept;
/// Whether the collective reduces (the op applies) or only moves data.
bool reduces(Collective c) noexcept;

}  // namespace ibscope
