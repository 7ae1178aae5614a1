// What a probe rank receives from its peers (probes/peer_info.hpp): round trips, and every
// malformed description or address list rejected with a RemoteError naming the rank and field
// (cases found by tests/fuzz/targets/fuzz_peer_info.cpp among them).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "ibscope/core/error.hpp"
#include "ibscope/probes/peer_info.hpp"

using Catch::Matchers::Contains;
using namespace ibscope;
using namespace ibscope::probes;

namespace {

bootstrap::Bytes blob_of(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return bootstrap::Bytes(p, p + s.size());
}

RankPort sample_port() {
  RankPort r;
  r.device = "rxe0:1";
  r.link_layer = "Ethernet";
  r.data_rate_gbit = 10;
  r.gid_index = 1;
  r.gid = "::ffff:10.0.2.15";
  r.active_mtu_bytes = 1024;
  r.binding = "bound to NUMA node 0";
  r.mem_initiator = "host";
  r.registration = "host";
  r.gpu_warnings = {"a warning"};
  return r;
}

std::string remote_error(const bootstrap::Bytes& b) {
  try {
    decode_rank_port(b, 3);
  } catch (const RemoteError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a RemoteError: ") + e.what() + ">";
  }
  return "<no exception>";
}

// The description as JSON text with the field `name` replaced by `value` (raw JSON).
bootstrap::Bytes port_with(const std::string& name, const std::string& value) {
  auto j = nlohmann::json::parse(
      std::string(reinterpret_cast<const char*>(encode_rank_port(sample_port()).data()),
                  encode_rank_port(sample_port()).size()));
  j[name] = nlohmann::json::parse(value);
  return blob_of(j.dump());
}

}  // namespace

TEST_CASE("peer info: a port description round-trips", "[probe][peer]") {
  const RankPort r = decode_rank_port(encode_rank_port(sample_port()), 0);
  CHECK(r.device == "rxe0:1");
  CHECK(r.gid_index == 1);
  CHECK(r.active_mtu_bytes == 1024);
  CHECK(r.cuda_device == -1);
  CHECK(r.gpu_warnings == std::vector<std::string>{"a warning"});
}

TEST_CASE("peer info: a malformed port description names the rank and the field", "[probe][peer]") {
  CHECK_THAT(remote_error(blob_of("[1,2]")), Contains("rank 3") && Contains("JSON object"));
  CHECK_THAT(remote_error(blob_of("{\"device\":")), Contains("rank 3") && Contains("not JSON"));
  // A number too large for a double: nlohmann throws out_of_range, not parse_error (fuzz).
  CHECK_THAT(remote_error(blob_of("88e8888888")), Contains("rank 3") && Contains("not JSON"));
  CHECK_THAT(remote_error(port_with("gid", "7")), Contains("gid: expected a string"));
  CHECK_THAT(remote_error(port_with("gid_index", "4294967297")),
             Contains("gid_index: expected an integer in -1..2147483647"));
  CHECK_THAT(remote_error(port_with("cuda_device", "-2")), Contains("cuda_device"));
  CHECK_THAT(remote_error(port_with("active_mtu_bytes", "-1")), Contains("active_mtu_bytes"));
  CHECK_THAT(remote_error(port_with("gpu_warnings", "[1]")), Contains("gpu_warnings[0]"));
  auto missing = nlohmann::json::parse(
      std::string(reinterpret_cast<const char*>(encode_rank_port(sample_port()).data()),
                  encode_rank_port(sample_port()).size()));
  missing.erase("binding");
  CHECK_THAT(remote_error(blob_of(missing.dump())), Contains("binding: missing"));
}

TEST_CASE("peer info: QP addresses are whole structs with valid PSN and MTU code",
          "[probe][peer]") {
  verbs::QpAddress a;
  a.qp_num = 17;
  a.psn = 0xabcdef;
  a.active_mtu_code = 3;
  const std::vector<verbs::QpAddress> two{a, a};
  const bootstrap::Bytes b = encode_qp_addresses(two);
  REQUIRE(b.size() == 2 * sizeof(verbs::QpAddress));
  const auto back = decode_qp_addresses(b, 2, "rank 1 (host b)");
  REQUIRE(back.size() == 2);
  CHECK(back[1].qp_num == 17);
  CHECK(back[1].psn == 0xabcdef);
  CHECK(decode_qp_addresses({}, 2, "rank 1").empty());

  CHECK_THROWS_WITH(decode_qp_addresses(std::span(b).first(40), 2, "rank 1 (host b)"),
                    Contains("rank 1 (host b) sent 40 bytes") && Contains("not whole"));
  CHECK_THROWS_WITH(decode_qp_addresses(b, 1, "rank 1"), Contains("more than the 1 expected"));
  verbs::QpAddress bad = a;
  bad.psn = 1u << 24;
  CHECK_THROWS_AS(decode_qp_addresses(encode_qp_addresses(std::span(&bad, 1)), 1, "rank 1"),
                  RemoteError);
  bad = a;
  bad.active_mtu_code = 6;
  CHECK_THROWS_WITH(decode_qp_addresses(encode_qp_addresses(std::span(&bad, 1)), 1, "rank 1"),
                    Contains("MTU code 6"));
}
