#pragma once
/// The TCP store's wire protocol, as pure encode/decode functions (no I/O), so that it can be
/// unit-tested and fuzzed. A frame is [u32 length][u8 type][payload], little-endian, with
/// length = 1 + payload bytes. Decoders bound every length by the bytes actually present and
/// throw ProtocolError on anything malformed; nothing is allocated from an unchecked length.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::bootstrap::wire {

/// A peer sent bytes that do not parse.
class ProtocolError : public RemoteError {
 public:
  using RemoteError::RemoteError;
};

enum class MsgType : std::uint8_t {
  kHello = 1,    ///< client -> server: token, rank, size, host
  kWelcome = 2,  ///< server -> client: accepted
  kRefused = 3,  ///< server -> client: reason, then the server closes
  kContrib = 4,  ///< client -> server: one rank's allgather contribution
  kResult = 5,   ///< server -> client: every rank's contribution for a round
  kAbort = 6,    ///< either way: the job is failing, with the reason
  kBye = 7,      ///< client -> server: this rank is done, its connection may close
  kLayout = 8,   ///< server -> client: answer to a kHosts round (where the ranks live)
  kPut = 9,      ///< client -> server: publish one value under a key (Bootstrap::publish)
  kGet = 10,     ///< client -> server: the values some ranks published under a key
  kValues = 11,  ///< server -> client: answer to a kGet
};

/// What the server does with a round's contributions (Contrib::mode).
enum class RoundMode : std::uint8_t {
  kAllgather = 0,  ///< every rank gets every contribution
  kGather = 1,     ///< rank 0 gets every contribution; the others get nothing (and do not wait)
  kFence = 2,      ///< no data: every rank gets an empty result once all have arrived
  kHosts = 3,      ///< no data: every rank gets a Layout built from the hellos' host names
  kBroadcast = 4,  ///< rank 0's contribution goes to every rank (the others contribute nothing)
};

/// Frames before authentication are tiny; a stranger cannot make the server allocate more.
inline constexpr std::uint32_t kMaxPreAuthFrameBytes = 4096;
/// Largest frame from an authenticated rank (allgather of raw samples fits easily).
inline constexpr std::uint32_t kMaxFrameBytes = 256u << 20;
inline constexpr std::size_t kHeaderBytes = 5;
/// A refusal whose reason starts with this is temporary (too many strangers were waiting):
/// the client connects again within its deadline. Every other refusal is final.
inline constexpr std::string_view kBusyRefusalPrefix = "server busy";

struct Hello {
  std::string token;
  std::uint32_t rank = 0;
  std::uint32_t size = 0;
  std::string host;
};
struct Contrib {
  std::uint64_t seq = 0;
  RoundMode mode = RoundMode::kAllgather;
  std::string what;
  Bytes data;
};
/// Where a rank lives, as far as it needs to know: its place on its host and the job's host
/// count for every rank (O(1) bytes each), and every rank's host for rank 0 only (it writes the
/// results), so that the root sends O(n) bytes in all, not O(n^2).
struct Layout {
  std::uint64_t seq = 0;
  std::uint32_t local_rank = 0;
  std::uint32_t local_size = 1;
  std::uint32_t host_count = 1;
  std::string root_host;
  std::vector<std::string> hosts;  ///< by rank: rank 0's answer only; empty for the others
};
struct Put {
  std::string key;
  Bytes value;
};
struct Get {
  std::uint64_t seq = 0;
  std::string key;
  std::vector<std::uint32_t> ranks;
};
/// The answer to a Get: one value per requested rank, in order; or why there is none (a rank
/// that never published the key), and then no values.
struct Values {
  std::uint64_t seq = 0;
  std::string error;
  std::vector<Bytes> values;
};
/// The key under which the server answers Gets with the host a rank named in its hello.
inline constexpr std::string_view kHostKey = "ibscope.host";
/// Bounds on what one rank may store on the server (Put).
inline constexpr std::size_t kMaxPutValueBytes = 1u << 20;
inline constexpr std::size_t kMaxKeysPerJob = 256;
struct Result {
  std::uint64_t seq = 0;
  std::vector<Bytes> blobs;
};
enum class AbortKind : std::uint8_t { kRemote = 1, kTimeout = 2 };
struct Abort {
  AbortKind kind = AbortKind::kRemote;
  std::string reason;
};

/// Frame header: message type and payload size. Throws ProtocolError if the length is 0, above
/// `max_frame_bytes`, or the type is unknown.
struct Header {
  MsgType type;
  std::uint32_t payload_bytes;
};
Header decode_header(std::span<const std::byte, kHeaderBytes> header,
                     std::uint32_t max_frame_bytes);

Bytes encode(const Hello& m);
Bytes encode(const Contrib& m);
Bytes encode(const Result& m);
Bytes encode(const Abort& m);
Bytes encode(const Layout& m);
Bytes encode(const Put& m);
Bytes encode(const Get& m);
Bytes encode(const Values& m);
Bytes encode_refused(const std::string& reason);
Bytes encode_empty(MsgType type);

Hello decode_hello(std::span<const std::byte> payload);
Contrib decode_contrib(std::span<const std::byte> payload);
Result decode_result(std::span<const std::byte> payload);
Abort decode_abort(std::span<const std::byte> payload);
std::string decode_refused(std::span<const std::byte> payload);
Layout decode_layout(std::span<const std::byte> payload);
Put decode_put(std::span<const std::byte> payload);
Get decode_get(std::span<const std::byte> payload);
Values decode_values(std::span<const std::byte> payload);

}  // namespace ibscope::bootstrap::wire
