#pragma once
/// The collectives ibscope measures, as a vocabulary every layer may name (results rows, the
/// model's cost formulas, the CLI). What each one is (names, busbw factor, call layout,
/// verification, help) is its descriptor: collectives/descriptor.hpp.

namespace ibscope {

/// One value per descriptor (collectives/descriptor.hpp), in the same order.
enum class Collective { kAllreduce, kReduceScatter, kAllgather, kBroadcast, kAlltoall, kAlltoallv };

}  // namespace ibscope
