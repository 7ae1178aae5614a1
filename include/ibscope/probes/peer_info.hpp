#pragma once
/// What a probe rank receives from its peers over the bootstrap, before any of it is used: each
/// rank's port description (JSON) and a partner's queue pair addresses (raw QpAddress structs).
/// Pure decoders: every size and field is checked, and anything malformed is a RemoteError that
/// names the sending rank (and the field), never a JSON library exception. Fuzzed by
/// tests/fuzz/targets/fuzz_peer_info.cpp.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/probes/probe_runner.hpp"
#include "ibscope/transport/verbs/queue_pair.hpp"

namespace ibscope::probes {

/// The port description a rank sends (JSON text).
bootstrap::Bytes encode_rank_port(const RankPort& port);
/// Decodes rank `rank`'s port description. Throws RemoteError ("rank 3 sent a malformed port
/// description: gid_index: expected an integer in -1..2147483647, got string").
RankPort decode_rank_port(std::span<const std::byte> bytes, int rank);

/// A link's queue pair addresses as the bytes that cross the bootstrap.
bootstrap::Bytes encode_qp_addresses(std::span<const verbs::QpAddress> addresses);
/// Decodes what `peer` (e.g. "rank 1 (host b)") sent: whole structs, at most `max_qps` of them,
/// each with a 24-bit PSN and a valid MTU code (IBV_MTU_256..4096). Throws RemoteError.
std::vector<verbs::QpAddress> decode_qp_addresses(std::span<const std::byte> bytes,
                                                  std::size_t max_qps, const std::string& peer);

}  // namespace ibscope::probes
