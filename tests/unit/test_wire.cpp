// The TCP store's wire protocol: exact byte layout, round trips of every message, and
// rejection of every malformed payload with ProtocolError, without allocating from a length
// that the bytes present do not back.

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "alloc_tracker.hpp"
#include "ibscope/bootstrap/wire.hpp"

using Catch::Matchers::Contains;
using ibscope::bootstrap::Bytes;
namespace wire = ibscope::bootstrap::wire;

using ibscope::test::largest_allocation_during;

// ---------------------------------------------------------------------------------------------
namespace {

Bytes bytes_of(std::initializer_list<int> values) {
  Bytes b;
  for (int v : values) b.push_back(static_cast<std::byte>(v));
  return b;
}

Bytes bytes_of(const std::string& s) {
  Bytes b(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) b[i] = static_cast<std::byte>(s[i]);
  return b;
}

Bytes pattern(std::size_t n, unsigned seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  return b;
}

void put_u32(Bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}
void put_u64(Bytes& b, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

// what() of the ProtocolError that `f` throws; a marker string if it throws nothing or another
// type, so that CHECK_THAT shows what happened.
template <typename F>
std::string protocol_error(F&& f) {
  try {
    f();
  } catch (const wire::ProtocolError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a ProtocolError: ") + e.what() + ">";
  }
  return "<no exception>";
}

// Decodes with allocation tracking: the ProtocolError message (as protocol_error) and the
// largest single allocation made meanwhile.
struct Tracked {
  std::string error;
  std::size_t largest_allocation;
};
template <typename F>
Tracked decode_tracked(F&& f) {
  ibscope::test::begin_thread_allocation_tracking();
  std::string error = protocol_error(f);  // catches every std::exception
  return {std::move(error), ibscope::test::end_thread_allocation_tracking()};
}

wire::Header header_of(const Bytes& frame, std::uint32_t max = wire::kMaxFrameBytes) {
  REQUIRE(frame.size() >= wire::kHeaderBytes);
  return wire::decode_header(
      std::span<const std::byte, wire::kHeaderBytes>(frame.data(), wire::kHeaderBytes), max);
}

// Checks the frame's header against its size and type; returns the payload.
std::span<const std::byte> payload_of(const Bytes& frame, wire::MsgType type) {
  const wire::Header h = header_of(frame);
  CHECK(h.type == type);
  REQUIRE(h.payload_bytes == frame.size() - wire::kHeaderBytes);
  return std::span<const std::byte>(frame).subspan(wire::kHeaderBytes);
}

wire::Header decode_header_bytes(std::initializer_list<int> five, std::uint32_t max) {
  const Bytes h = bytes_of(five);
  return wire::decode_header(std::span<const std::byte, wire::kHeaderBytes>(h.data(), 5), max);
}

// Every strict prefix of `payload` must be rejected as truncated, and the payload with one
// extra byte as having trailing bytes.
template <typename Decode>
void check_rejects_truncation_and_trailing(std::span<const std::byte> payload, Decode decode) {
  for (std::size_t n = 0; n < payload.size(); ++n) {
    INFO("prefix of " << n << " of " << payload.size() << " bytes");
    CHECK_THAT(protocol_error([&] { (void)decode(payload.first(n)); }), Contains("truncated"));
  }
  Bytes longer(payload.begin(), payload.end());
  longer.push_back(std::byte{0});
  CHECK_THAT(protocol_error([&] { (void)decode(std::span<const std::byte>(longer)); }),
             Contains("1 trailing bytes"));
  longer.resize(longer.size() + 9);
  CHECK_THAT(protocol_error([&] { (void)decode(std::span<const std::byte>(longer)); }),
             Contains("10 trailing bytes"));
}

}  // namespace

TEST_CASE("wire: frame layout is [u32 length LE][u8 type][payload]", "[wire]") {
  CHECK(wire::encode_empty(wire::MsgType::kWelcome) == bytes_of({1, 0, 0, 0, 2}));
  CHECK(wire::encode_empty(wire::MsgType::kBye) == bytes_of({1, 0, 0, 0, 7}));

  const Bytes hello = wire::encode(wire::Hello{"ab", 0x01020304, 5, "h"});
  CHECK(hello == bytes_of({
                     // length = 1 + 4+2 + 4 + 4 + 4+1 = 20
                     20, 0, 0, 0, 1,         //
                     2,  0, 0, 0, 'a', 'b',  // token
                     4,  3, 2, 1,            // rank
                     5,  0, 0, 0,            // size
                     1,  0, 0, 0, 'h',       // host
                 }));

  const Bytes abort = wire::encode(wire::Abort{wire::AbortKind::kTimeout, "x"});
  CHECK(abort == bytes_of({7, 0, 0, 0, 6, 2, 1, 0, 0, 0, 'x'}));

  const Bytes result = wire::encode(wire::Result{0x0102030405060708ULL, {bytes_of({9}), {}}});
  CHECK(result == bytes_of({22, 0, 0, 0, 5,           //
                            8,  7, 6, 5, 4, 3, 2, 1,  // seq
                            2,  0, 0, 0,              // count
                            1,  0, 0, 0, 9,           // blob 0
                            0,  0, 0, 0}));           // blob 1 (empty)
}

TEST_CASE("wire: decode_header", "[wire]") {
  SECTION("accepts every known type and returns length - 1") {
    for (int t = 1; t <= 7; ++t) {
      const auto h = decode_header_bytes({10, 0, 0, 0, t}, 4096);
      CHECK(static_cast<int>(h.type) == t);
      CHECK(h.payload_bytes == 9);
    }
    CHECK(decode_header_bytes({1, 0, 0, 0, 7}, 1).payload_bytes == 0);
    CHECK(decode_header_bytes({0, 0x10, 0, 0, 4}, 4096).payload_bytes == 4095);  // length 4096
  }
  SECTION("rejects length 0") {
    CHECK_THAT(protocol_error([&] {
                 (void)decode_header_bytes({0, 0, 0, 0, 1}, 4096);
               }),
               Contains("frame length 0"));
  }
  SECTION("rejects a length above the maximum") {
    CHECK_THAT(protocol_error([&] {
                 (void)decode_header_bytes({1, 0x10, 0, 0, 1}, 4096);
               }),
               Contains("frame length 4097 outside 1..4096"));
    CHECK_THROWS_AS(decode_header_bytes({0xff, 0xff, 0xff, 0xff, 1}, wire::kMaxFrameBytes),
                    wire::ProtocolError);
    // "GET " read as a length: the bytes of an HTTP request are refused before authentication.
    CHECK_THROWS_AS(decode_header_bytes({'G', 'E', 'T', ' ', '/'}, wire::kMaxPreAuthFrameBytes),
                    wire::ProtocolError);
  }
  SECTION("rejects unknown types") {
    for (int t : {0, 12, 13, 0x7f, 0xff}) {
      INFO("type " << t);
      CHECK_THAT(protocol_error([&] {
                   (void)decode_header_bytes({3, 0, 0, 0, t}, 4096);
                 }),
                 Contains("unknown message type"));
    }
  }
  SECTION("ProtocolError is a RemoteError") {
    try {
      (void)decode_header_bytes({0, 0, 0, 0, 1}, 4096);
      FAIL("expected ProtocolError");
    } catch (const ibscope::RemoteError& e) {
      CHECK(e.kind() == ibscope::ErrorKind::kRemote);
    }
  }
}

TEST_CASE("wire: Hello round trip and rejection", "[wire]") {
  const wire::Hello cases[] = {
      {"secret-token", 3, 8, "node17"},
      {"", 0, 1, ""},
      {std::string("t\0k\xff", 4), std::numeric_limits<std::uint32_t>::max(),
       std::numeric_limits<std::uint32_t>::max(), std::string(300, 'h')},
  };
  for (const auto& m : cases) {
    const Bytes frame = wire::encode(m);
    const auto payload = payload_of(frame, wire::MsgType::kHello);
    const wire::Hello back = wire::decode_hello(payload);
    CHECK(back.token == m.token);
    CHECK(back.rank == m.rank);
    CHECK(back.size == m.size);
    CHECK(back.host == m.host);
    check_rejects_truncation_and_trailing(payload, wire::decode_hello);
  }
}

TEST_CASE("wire: Contrib round trip and rejection", "[wire]") {
  const wire::Contrib cases[] = {
      {0, wire::RoundMode::kAllgather, "hostname exchange", bytes_of(std::string("node01"))},
      {1, wire::RoundMode::kFence, "", {}},
      {2, wire::RoundMode::kGather, "samples", pattern(100, 1)},
      {3, wire::RoundMode::kBroadcast, "pairs", pattern(10, 2)},
      {std::numeric_limits<std::uint64_t>::max(), wire::RoundMode::kHosts, "layout", {}},
  };
  for (const auto& m : cases) {
    const Bytes frame = wire::encode(m);
    const auto payload = payload_of(frame, wire::MsgType::kContrib);
    const wire::Contrib back = wire::decode_contrib(payload);
    CHECK(back.seq == m.seq);
    CHECK(back.mode == m.mode);
    CHECK(back.what == m.what);
    CHECK(back.data == m.data);
    check_rejects_truncation_and_trailing(payload, wire::decode_contrib);
  }
  SECTION("an unknown round mode") {
    const Bytes frame = wire::encode(cases[0]);
    const auto view = payload_of(frame, wire::MsgType::kContrib);
    Bytes payload(view.begin(), view.end());
    payload[8] = std::byte{9};
    CHECK_THROWS_WITH(wire::decode_contrib(payload), Contains("unknown round mode 9"));
  }
  SECTION("1 MiB of data") {
    const wire::Contrib big{42, wire::RoundMode::kGather, "samples", pattern(1 << 20, 3)};
    const Bytes frame = wire::encode(big);
    CHECK(frame.size() == wire::kHeaderBytes + 8 + 1 + 4 + 7 + 4 + (1u << 20));
    const wire::Contrib back = wire::decode_contrib(payload_of(frame, wire::MsgType::kContrib));
    CHECK(back.data == big.data);
  }
}

TEST_CASE("wire: Result round trip and rejection", "[wire]") {
  const wire::Result cases[] = {
      {0, {}},
      {7, {{}}},
      {9, {bytes_of(std::string("a")), {}, pattern(300, 1), {}, bytes_of({0})}},
  };
  for (const auto& m : cases) {
    const Bytes frame = wire::encode(m);
    const auto payload = payload_of(frame, wire::MsgType::kResult);
    const wire::Result back = wire::decode_result(payload);
    CHECK(back.seq == m.seq);
    CHECK(back.blobs == m.blobs);
    // A truncated count is "truncated"; a truncated blob list may instead be caught by the
    // count bound, so only the type is checked for those prefixes.
    for (std::size_t n = 0; n < payload.size(); ++n) {
      INFO("prefix of " << n << " bytes");
      CHECK_THAT(protocol_error([&] { (void)wire::decode_result(payload.first(n)); }),
                 Contains("bootstrap protocol"));
    }
    Bytes longer(payload.begin(), payload.end());
    longer.push_back(std::byte{1});
    CHECK_THAT(protocol_error([&] { (void)wire::decode_result(longer); }), Contains("trailing"));
  }
  SECTION("1 MiB blobs") {
    const wire::Result big{3, {pattern(1 << 20, 1), {}, pattern((1 << 20) + 1, 2)}};
    const Bytes frame = wire::encode(big);
    CHECK(wire::decode_result(payload_of(frame, wire::MsgType::kResult)).blobs == big.blobs);
  }
}

TEST_CASE("wire: Abort and Refused round trip and rejection", "[wire]") {
  for (const auto kind : {wire::AbortKind::kRemote, wire::AbortKind::kTimeout}) {
    const wire::Abort m{kind, "rank 2 (node3) exited or crashed"};
    const Bytes frame = wire::encode(m);
    const auto payload = payload_of(frame, wire::MsgType::kAbort);
    const wire::Abort back = wire::decode_abort(payload);
    CHECK(back.kind == m.kind);
    CHECK(back.reason == m.reason);
    check_rejects_truncation_and_trailing(payload, wire::decode_abort);
  }
  SECTION("an unknown abort kind reads as a remote failure") {
    Bytes payload = bytes_of({99});
    put_u32(payload, 0);
    CHECK(wire::decode_abort(payload).kind == wire::AbortKind::kRemote);
  }
  for (const std::string& reason : {std::string("wrong job token"), std::string()}) {
    const Bytes frame = wire::encode_refused(reason);
    const auto payload = payload_of(frame, wire::MsgType::kRefused);
    CHECK(wire::decode_refused(payload) == reason);
    check_rejects_truncation_and_trailing(payload, wire::decode_refused);
  }
}

TEST_CASE("wire: oversized length fields are rejected without allocating", "[wire]") {
  // Each payload below claims far more bytes than it carries. Decoding must throw
  // ProtocolError and allocate nothing near the claimed size.
  constexpr std::size_t kSmall = 4096;

  SECTION("hello token length") {
    Bytes p;
    put_u32(p, 0xffffffffu);
    p.push_back(std::byte{'x'});
    const Tracked t = decode_tracked([&] { (void)wire::decode_hello(p); });
    CHECK_THAT(t.error, Contains("truncated hello"));
    CHECK(t.largest_allocation < kSmall);
  }
  SECTION("hello host length") {
    Bytes p;
    put_u32(p, 1);
    p.push_back(std::byte{'t'});
    put_u32(p, 0);
    put_u32(p, 1);
    put_u32(p, 0x7fffffffu);
    const Tracked t = decode_tracked([&] { (void)wire::decode_hello(p); });
    CHECK_THAT(t.error, Contains("truncated hello"));
    CHECK(t.largest_allocation < kSmall);
  }
  SECTION("contrib data length") {
    Bytes p;
    put_u64(p, 0);
    put_u32(p, 0);
    put_u32(p, 256u << 20);
    p.resize(p.size() + 16);
    const Tracked t = decode_tracked([&] { (void)wire::decode_contrib(p); });
    CHECK_THAT(t.error, Contains("truncated contribution"));
    CHECK(t.largest_allocation < kSmall);
  }
  SECTION("result count far beyond the bytes present") {
    for (const std::uint32_t count : {0xffffffffu, 0x10000000u, 1000000u, 3u}) {
      INFO("count " << count);
      Bytes p;
      put_u64(p, 1);
      put_u32(p, count);
      put_u32(p, 0);  // room for a couple of empty blobs only
      put_u32(p, 0);
      const Tracked t = decode_tracked([&] { (void)wire::decode_result(p); });
      CHECK_THAT(t.error, Contains("result count exceeds payload"));
      CHECK(t.largest_allocation < kSmall);
    }
  }
  SECTION("result blob length") {
    Bytes p;
    put_u64(p, 1);
    put_u32(p, 1);
    put_u32(p, 0xfffffff0u);
    p.resize(p.size() + 8);
    const Tracked t = decode_tracked([&] { (void)wire::decode_result(p); });
    CHECK_THAT(t.error, Contains("truncated result"));
    CHECK(t.largest_allocation < kSmall);
  }
  SECTION("abort and refused reason length") {
    Bytes a = bytes_of({1});
    put_u32(a, 0xffffffffu);
    const Tracked t = decode_tracked([&] { (void)wire::decode_abort(a); });
    CHECK_THAT(t.error, Contains("truncated abort"));
    CHECK(t.largest_allocation < kSmall);
    Bytes r;
    put_u32(r, 0x80000000u);
    const Tracked u = decode_tracked([&] { (void)wire::decode_refused(r); });
    CHECK_THAT(u.error, Contains("truncated refused"));
    CHECK(u.largest_allocation < kSmall);
  }
  SECTION("the tracker itself sees a large allocation") {
    const Bytes frame =
        wire::encode(wire::Contrib{1, wire::RoundMode::kAllgather, "x", pattern(1 << 16, 0)});
    const auto payload = std::span<const std::byte>(frame).subspan(wire::kHeaderBytes);
    CHECK(largest_allocation_during([&] { (void)wire::decode_contrib(payload); }) >= (1u << 16));
  }
}

TEST_CASE("wire: random byte strings never crash a decoder", "[wire]") {
  // A cheap fuzz: every decoder either returns or throws ProtocolError on arbitrary input.
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int iter = 0; iter < 2000; ++iter) {
    Bytes p(next() % 40);
    for (auto& b : p) b = static_cast<std::byte>(next() & 0xff);
    // Small lengths are likelier to parse, so shrink length fields some of the time.
    if (!p.empty() && iter % 2 == 0) p[0] = static_cast<std::byte>(next() % 8);
    const std::span<const std::byte> s(p);
    const auto swallow = [](auto&& f) {
      try {
        f();
      } catch (const wire::ProtocolError&) {
      }
    };
    const std::size_t largest = largest_allocation_during([&] {
      swallow([&] { (void)wire::decode_hello(s); });
      swallow([&] { (void)wire::decode_contrib(s); });
      swallow([&] { (void)wire::decode_result(s); });
      swallow([&] { (void)wire::decode_abort(s); });
      swallow([&] { (void)wire::decode_refused(s); });
    });
    REQUIRE(largest < 4096);
  }
}

TEST_CASE("wire: layout put get and values round trip", "[wire]") {
  SECTION("layout") {
    const wire::Layout cases[] = {
        {7, 3, 8, 1344, "node0000", {}},
        {0, 0, 2, 2, "a", {"a", "a", "b", "b"}},
    };
    for (const auto& m : cases) {
      const Bytes frame = wire::encode(m);
      const auto payload = payload_of(frame, wire::MsgType::kLayout);
      const wire::Layout back = wire::decode_layout(payload);
      CHECK(back.seq == m.seq);
      CHECK(back.local_rank == m.local_rank);
      CHECK(back.local_size == m.local_size);
      CHECK(back.host_count == m.host_count);
      CHECK(back.root_host == m.root_host);
      CHECK(back.hosts == m.hosts);
      check_rejects_truncation_and_trailing(payload, wire::decode_layout);
    }
  }
  SECTION("put") {
    const wire::Put m{"ucx.address.0", pattern(400, 5)};
    const Bytes frame = wire::encode(m);
    const auto payload = payload_of(frame, wire::MsgType::kPut);
    const wire::Put back = wire::decode_put(payload);
    CHECK(back.key == m.key);
    CHECK(back.value == m.value);
    check_rejects_truncation_and_trailing(payload, wire::decode_put);
  }
  SECTION("get") {
    const wire::Get m{9, "ucx.address.0", {1, 7, 10751}};
    const Bytes frame = wire::encode(m);
    const auto payload = payload_of(frame, wire::MsgType::kGet);
    const wire::Get back = wire::decode_get(payload);
    CHECK(back.seq == m.seq);
    CHECK(back.key == m.key);
    CHECK(back.ranks == m.ranks);
    check_rejects_truncation_and_trailing(payload, wire::decode_get);
  }
  SECTION("values") {
    const wire::Values cases[] = {
        {3, "", {pattern(400, 1), pattern(0, 0), pattern(17, 2)}},
        {4, "rank 5 (b) has not published 'x'", {}},
    };
    for (const auto& m : cases) {
      const Bytes frame = wire::encode(m);
      const auto payload = payload_of(frame, wire::MsgType::kValues);
      const wire::Values back = wire::decode_values(payload);
      CHECK(back.seq == m.seq);
      CHECK(back.error == m.error);
      CHECK(back.values == m.values);
      check_rejects_truncation_and_trailing(payload, wire::decode_values);
    }
  }
  SECTION("a count beyond the payload is refused before anything is reserved") {
    const Bytes frame = wire::encode(wire::Get{1, "k", {}});
    const auto view = payload_of(frame, wire::MsgType::kGet);
    Bytes payload(view.begin(), view.end());
    // The count is the last field: claim four billion ranks in a frame of a few bytes.
    for (std::size_t i = payload.size() - 4; i < payload.size(); ++i) payload[i] = std::byte{0xff};
    CHECK_THROWS_WITH(wire::decode_get(payload), Contains("count exceeds payload"));
  }
}
