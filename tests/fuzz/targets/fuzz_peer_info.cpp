// What a probe rank receives from its peers (probes/peer_info.hpp): the first byte picks the
// port description (JSON) or a partner's queue pair addresses (raw QpAddress structs, up to
// 1 + byte/8 QPs expected), the rest is the bytes as they came. Expected rejection:
// RemoteError naming the rank. Property: what was accepted encodes back to the same bytes
// (addresses) or to a description that decodes to the same fields.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/probes/peer_info.hpp"

namespace probes = ibscope::probes;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto bytes = ibscope::fuzz::as_bytes(data + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      const probes::RankPort port = probes::decode_rank_port(bytes, 3);
      const probes::RankPort again = probes::decode_rank_port(probes::encode_rank_port(port), 3);
      IBSCOPE_FUZZ_CHECK(again.device == port.device && again.gid_index == port.gid_index &&
                         again.active_mtu_bytes == port.active_mtu_bytes &&
                         again.cuda_device == port.cuda_device &&
                         again.gpu_warnings == port.gpu_warnings);
    } else {
      const std::size_t max_qps = 1 + data[0] / 8;
      const auto addresses = probes::decode_qp_addresses(bytes, max_qps, "rank 1 (host b)");
      IBSCOPE_FUZZ_CHECK(addresses.size() <= max_qps);
      const auto encoded = probes::encode_qp_addresses(addresses);
      IBSCOPE_FUZZ_CHECK(std::equal(encoded.begin(), encoded.end(), bytes.begin(), bytes.end()));
    }
  } catch (const ibscope::RemoteError&) {
  }
  return 0;
}
