// accept's pattern phase (--pattern) and GPCNet's congestion test (--congestion) over real RDMA:
// emulated hosts in the Soft-RoCE guest (emulated_hosts.hpp), UCX over rc_verbs, with no UCX
// variable set by the test. Soft-RoCE under TCG is far below any line rate and its figures vary
// 10x with the host's load: what is asserted is that the figures were measured over rc_verbs
// and that the results file's figures are the ones its definitions give (the aggregate and
// Jain's index from the flows' rates, the verdict from the impact factors), never a rate.

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "emulated_hosts.hpp"
#include "rxe_env.hpp"

namespace rxe = ibscope::test::rxe;
using nlohmann::json;

namespace {

/// Rank 0's document of a completed accept run whose every rank pair's lanes are rc_verbs (none
/// ud_verbs, ibscope's Soft-RoCE UCX set, no UCX variable from the test). Soft-RoCE under TCG is
/// far below the ports' rate: a FAIL verdict (exit 1) is expected, as is a pass.
json checked_accept_document(const rxe::HostsRun& r) {
  REQUIRE((r.rc[0] == 0 || r.rc[0] == 1));
  // UCX may log a line on stdout before the document.
  const auto brace = r.out[0].find('{');
  REQUIRE(brace != std::string::npos);
  const json doc = json::parse(r.out[0].substr(brace));
  CHECK(doc["complete"] == true);
  const json& env = doc["environment"];
  CHECK_FALSE(env["ucx_env"].contains("UCX_TLS"));
  CHECK(env["ucx_env_set"]["UCX_TLS"] == "^ud_verbs,sm");
  REQUIRE_FALSE(env["transports"].empty());
  for (const auto& [pair, lanes] : env["transports"].items()) {
    INFO(pair << ": " << lanes);
    CHECK(lanes.get<std::string>().find("rc_verbs/") != std::string::npos);
    CHECK(lanes.get<std::string>().find("ud_verbs") == std::string::npos);
  }
  return doc;
}

bool finite_positive(const json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}

/// `counter`'s growth on host `host`'s reading of the NIC whose name starts with `nic`.
std::uint64_t counter_delta(const json& row, const std::string& host, const std::string& nic,
                            const std::string& counter) {
  std::uint64_t n = 0;
  for (const auto& reading : row.value("nic_counters", json::array())) {
    if (reading["host"] != host || reading["nic"].get<std::string>().rfind(nic, 0) != 0) continue;
    for (const auto& c : reading["counters"]) {
      if (c["name"] == counter) n += c["delta"].get<std::uint64_t>();
    }
  }
  return n;
}

}  // namespace

TEST_CASE("accept --pattern incast:2 over rc_verbs: two emulated hosts stream into a third",
          "[rxe][ucx][pattern]") {
  rxe::require_guest();
  const auto& dev = rxe::devices();
  // Hub g0 on rxe1, senders g1 and g2 on rxe0: both flows cross rail A's veth into rxe1 at once.
  // --pairs first: the all-pairs phase measures g0-g1 only (this test is about the pattern).
  constexpr int kSizeBytes = 64 * 1024, kWindow = 8, kIters = 4;
  const rxe::HostsRun r = rxe::run_hosts(
      3, 1,
      rxe::words(fmt::format("accept --transport ucx --skip-allreduce --no-loopback --pairs first "
                             "--lat-iters 20 --bw-size {} --bw-window {} --bw-iters {} --retests 0 "
                             "--pattern incast:2 --pattern-hubs 0 --timeout 60 --format json",
                             kSizeBytes, kWindow, kIters)),
      "-d " + dev[1] + "|-d " + dev[0] + "|-d " + dev[0]);
  INFO(r.describe());
  const json doc = checked_accept_document(r);

  // The round's verdict in acceptance.patterns: the hub, both flows, the aggregate and Jain's.
  REQUIRE(doc["acceptance"].contains("patterns"));
  REQUIRE(doc["acceptance"]["patterns"].size() == 1);
  const json& round = doc["acceptance"]["patterns"][0];
  INFO(round.dump());
  CHECK(round["pattern"] == "incast:2");
  CHECK(round["hub_host"] == "g0");
  CHECK(round["size_bytes"] == kSizeBytes);
  REQUIRE(round["flows"].size() == 2);
  std::set<std::string> senders;
  std::vector<double> rates;
  for (const auto& f : round["flows"]) {
    CHECK(f["host_dst"] == "g0");
    senders.insert(f["host_src"].get<std::string>());
    CHECK(finite_positive(f["bw_gbps"]));
    rates.push_back(f["bw_gbps"].get<double>());
  }
  CHECK(senders == std::set<std::string>{"g1", "g2"});
  // Both flows move the same bytes, so the aggregate (all bytes over the slowest flow's time) is
  // twice the slower flow's rate; Jain's index is (a + b)^2 / 2(a^2 + b^2).
  const double a = rates[0], b = rates[1];
  CHECK(finite_positive(round["aggregate_gbps"]));
  CHECK(round["aggregate_gbps"].get<double>() == Approx(2 * std::min(a, b)).epsilon(1e-6));
  CHECK(round["fairness_jain"].get<double>() ==
        Approx((a + b) * (a + b) / (2 * (a * a + b * b))).epsilon(1e-6));
  CHECK(round["pass"].is_boolean());
  if (!round["pass"].get<bool>()) {
    CHECK(round["reason"].get<std::string>().find("incast:2 onto g0") != std::string::npos);
  }

  // Its flows in the p2p rows, each over rc_verbs, and the hub's NIC received them: at least one
  // packet per 4 KiB (RoCE's largest MTU) of the flows' timed bytes.
  std::vector<json> rows;
  for (const auto& row : doc["p2p"]["rows"]) {
    if (row.contains("pattern")) rows.push_back(row);
  }
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    INFO(row.dump());
    CHECK(row["pattern"]["name"] == "incast:2");
    CHECK(row["pattern"]["hub_host"] == "g0");
    CHECK(row["pattern"]["flows"] == 2);
    CHECK(row["host_b"] == "g0");
    CHECK(row["pattern"]["aggregate_bw_gbps"] == round["aggregate_gbps"]);
    CHECK(row["pattern"]["fairness_jain"] == round["fairness_jain"]);
    CHECK(row["transports"].get<std::string>().find("rc_verbs/") != std::string::npos);
    CHECK(counter_delta(row, "g0", dev[1], "rcvd_pkts") >=
          2u * kSizeBytes * kWindow * kIters / 4096);
  }
}

TEST_CASE("accept --congestion over rc_verbs: an incast on the veth the victims cross",
          "[rxe][ucx][congestion]") {
  rxe::require_guest();
  const auto& dev = rxe::devices();
  // 2 emulated hosts x 2 ranks on rail A: g0's ranks on rxe0 and rxe1, g1's on rxe1 and rxe0.
  // Victims 0 (g0, rxe0) and 2 (g1, rxe1) ping-pong and all-reduce across the veth; congestor 3
  // (g1, rxe0) streams its incast into congestor 1 (g0, rxe1) across the same veth. (Rail B
  // cannot take part: a rank on rxe2/rxe3 cannot reach one on rxe0/rxe1, two subnets with no
  // route between them, and the congestion phase talks between every victim and the leader.)
  // The all-pairs phase is cut short (--mad-k 100, no latency ratio); 64 KiB messages, 16
  // packets each at rxe's 4 KiB MTU or more at less.
  const rxe::HostsRun r = rxe::run_hosts(
      2, 2,
      rxe::words("accept --transport ucx --skip-allreduce --no-loopback --bw-size 64K --bw-iters 2 "
                 "--retests 0 --mad-k 100 --max-latency-ratio 0 --lat-iters 20 --congestion "
                 "--congestors incast --victim-ranks 0,2 --ar-iters 4 --congestion-ar-size 64K "
                 "--congestor-size 64K --timeout 60 --format json"),
      "-d " + dev[0] + "," + dev[1] + "|-d " + dev[1] + "," + dev[0]);
  INFO(r.describe());
  const json doc = checked_accept_document(r);

  REQUIRE(doc["acceptance"].contains("congestion"));
  const json& c = doc["acceptance"]["congestion"];
  INFO(c.dump());
  CHECK(c["by_host"] == false);
  CHECK(c["victim_ranks"] == json::array({0, 2}));
  CHECK(c["congestor_ranks"] == 2);
  CHECK(c["victim_pairs"] == 1);
  CHECK(c["allreduce_bytes"] == 64 * 1024);
  CHECK(c["congestor_bytes"] == 64 * 1024);
  // One impact factor per victim metric under the incast, each measured (finite, > 0), its
  // limit and verdict filled, and the run's verdict theirs.
  REQUIRE(c["impacts"].size() == 4);
  std::set<std::string> metrics;
  bool all_pass = true;
  for (const auto& i : c["impacts"]) {
    INFO(i.dump());
    CHECK(i["congestor"] == "incast");
    metrics.insert(i["metric"].get<std::string>());
    CHECK(finite_positive(i["isolated"]));
    CHECK(finite_positive(i["congested"]));
    REQUIRE(finite_positive(i["impact"]));
    const bool tail = i["tail"].get<bool>();
    CHECK(i["max_impact"] == (tail ? c["max_tail_impact"] : c["max_impact"]));
    CHECK(i["pass"] == (i["impact"].get<double>() <= i["max_impact"].get<double>()));
    all_pass = all_pass && i["pass"].get<bool>();
  }
  CHECK(metrics ==
        std::set<std::string>{"latency_p50_us", "latency_p99_us", "busbw_gbps", "tail_busbw_gbps"});
  CHECK(c["pass"] == all_pass);
  // The congestors really loaded the veth while the victims measured.
  REQUIRE(c["loads"].size() == 1);
  CHECK(c["loads"][0]["congestor"] == "incast");
  CHECK(c["loads"][0]["rounds"].get<int>() >= 1);
  CHECK(finite_positive(c["loads"][0]["received_gbps"]));
}
