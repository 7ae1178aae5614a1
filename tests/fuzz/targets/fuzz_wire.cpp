// The TCP store's wire protocol (bootstrap/wire.hpp) as the server and clients read it: the
// input is a byte stream of frames. Each header is checked against the pre-authentication limit
// until a hello was decoded, then the full one; each payload goes to its type's decoder.
// Expected rejection: wire::ProtocolError. Property: a decoded message encodes back to the very
// bytes of its frame (the format has one spelling per message).

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "ibscope/bootstrap/wire.hpp"

namespace wire = ibscope::bootstrap::wire;

namespace {

bool same(const ibscope::bootstrap::Bytes& encoded, std::span<const std::byte> frame) {
  return std::equal(encoded.begin(), encoded.end(), frame.begin(), frame.end());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> stream = ibscope::fuzz::as_bytes(data, size);
  std::size_t pos = 0;
  bool authenticated = false;
  try {
    while (stream.size() - pos >= wire::kHeaderBytes) {
      const auto header = wire::decode_header(
          std::span<const std::byte, wire::kHeaderBytes>(stream.data() + pos, wire::kHeaderBytes),
          authenticated ? wire::kMaxFrameBytes : wire::kMaxPreAuthFrameBytes);
      if (stream.size() - pos - wire::kHeaderBytes < header.payload_bytes) break;  // partial
      const auto frame = stream.subspan(pos, wire::kHeaderBytes + header.payload_bytes);
      const auto payload = frame.subspan(wire::kHeaderBytes);
      pos += frame.size();
      switch (header.type) {
        case wire::MsgType::kHello: {
          const wire::Hello m = wire::decode_hello(payload);
          IBSCOPE_FUZZ_CHECK(same(wire::encode(m), frame));
          authenticated = true;
          break;
        }
        case wire::MsgType::kContrib:
          IBSCOPE_FUZZ_CHECK(same(wire::encode(wire::decode_contrib(payload)), frame));
          break;
        case wire::MsgType::kResult:
          IBSCOPE_FUZZ_CHECK(same(wire::encode(wire::decode_result(payload)), frame));
          break;
        case wire::MsgType::kLayout:
          IBSCOPE_FUZZ_CHECK(same(wire::encode(wire::decode_layout(payload)), frame));
          break;
        case wire::MsgType::kPut:
          IBSCOPE_FUZZ_CHECK(same(wire::encode(wire::decode_put(payload)), frame));
          break;
        case wire::MsgType::kGet:
          IBSCOPE_FUZZ_CHECK(same(wire::encode(wire::decode_get(payload)), frame));
          break;
        case wire::MsgType::kValues:
          IBSCOPE_FUZZ_CHECK(same(wire::encode(wire::decode_values(payload)), frame));
          break;
        case wire::MsgType::kAbort: {
          const wire::Abort m = wire::decode_abort(payload);
          // Unknown kinds read as kRemote, so only the two known spellings round-trip.
          const auto kind = static_cast<std::uint8_t>(payload[0]);
          if (kind == 1 || kind == 2) IBSCOPE_FUZZ_CHECK(same(wire::encode(m), frame));
          break;
        }
        case wire::MsgType::kRefused:
          IBSCOPE_FUZZ_CHECK(same(wire::encode_refused(wire::decode_refused(payload)), frame));
          break;
        case wire::MsgType::kWelcome:
        case wire::MsgType::kBye:
          if (payload.empty()) IBSCOPE_FUZZ_CHECK(same(wire::encode_empty(header.type), frame));
          break;
      }
    }
  } catch (const wire::ProtocolError&) {
  }
  return 0;
}
