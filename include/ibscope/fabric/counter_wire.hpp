#pragma once
/// NIC counter deltas on the bootstrap's wire (a host's first rank to rank 0, once per row or
/// round) and their merge at rank 0. Text, one line per NIC and per moved counter; a malformed
/// blob is a RemoteError naming what it carried.

#include <string>
#include <string_view>
#include <vector>

#include "ibscope/fabric/counters.hpp"

namespace ibscope::fabric {

std::string encode_deltas(const std::vector<NicDelta>& deltas);
/// Throws RemoteError on a malformed blob.
std::vector<NicDelta> decode_deltas(std::string_view blob);

}  // namespace ibscope::fabric
