// accept's checks on NIC counters (accept/counter_verdict.hpp): physical errors, transport
// retransmits against packets moved, flaps, congestion shares, and the link verdicts that
// carry them.

#include <catch2/catch.hpp>

#include "ibscope/accept/counter_verdict.hpp"
#include "ibscope/accept/link_verdict.hpp"

using namespace ibscope;
using namespace ibscope::accept;
using fabric::CounterKind;
using fabric::CounterSource;

namespace {

fabric::NicDelta verdict_nic(std::string host, std::string nic, std::string driver,
                             std::vector<fabric::CounterDelta> counters) {
  fabric::NicDelta d;
  d.host = std::move(host);
  d.nic = std::move(nic);
  d.driver = std::move(driver);
  d.interval_s = 1;
  d.counters = std::move(counters);
  return d;
}

fabric::CounterDelta verdict_counter(CounterSource source, std::string name, CounterKind kind,
                                     std::uint64_t delta) {
  return fabric::CounterDelta{source, std::move(name), kind, delta};
}

}  // namespace

TEST_CASE("counter verdict: physical errors fail at the first one by default",
          "[accept][counters]") {
  const auto nic = verdict_nic(
      "h3", "mlx5_2:1", "mlx5",
      {verdict_counter(CounterSource::kIbPort, "symbol_error", CounterKind::kErrors, 17),
       verdict_counter(CounterSource::kIbPort, "port_rcv_errors", CounterKind::kErrors, 1204),
       verdict_counter(CounterSource::kIbPort, "port_xmit_packets", CounterKind::kTraffic,
                       1000000)});
  const CounterFindings f = judge_counters({nic}, CounterThresholds{});
  CHECK(f.errors);
  CHECK_FALSE(f.flapped);
  CHECK(f.errors_text == "h3 mlx5_2:1: symbol_error +17, port_rcv_errors +1,204");
  CHECK(f.summary() == "errors: h3 mlx5_2:1: symbol_error +17, port_rcv_errors +1,204");
  CounterThresholds lenient;
  lenient.max_link_errors = 2000;
  CHECK_FALSE(judge_counters({nic}, lenient).errors);
}

TEST_CASE("counter verdict: retransmits are judged against the packets moved",
          "[accept][counters]") {
  auto tcp = [](std::uint64_t retrans, std::uint64_t out) {
    return verdict_nic(
        "h2", "tcp", "tcp",
        {verdict_counter(CounterSource::kTcp, "RetransSegs", CounterKind::kErrors, retrans),
         verdict_counter(CounterSource::kTcp, "OutSegs", CounterKind::kTraffic, out),
         verdict_counter(CounterSource::kTcp, "InSegs", CounterKind::kTraffic, 0)});
  };
  // Measured on a clean shaped netns link: 1 of 139,306 segments.
  CHECK_FALSE(judge_counters({tcp(1, 139306)}, {}).errors);
  // 1 % loss into one host: 1,081 of 139,302.
  const CounterFindings lossy = judge_counters({tcp(1081, 139302)}, {});
  CHECK(lossy.errors);
  CHECK(lossy.errors_text == "h2 tcp: RetransSegs +1,081 (7,760 ppm of 139,302 packets)");
  // A handful in a short test is not a verdict.
  CHECK_FALSE(judge_counters({tcp(3, 213)}, {}).errors);
  CHECK(packets_moved(tcp(0, 50)) == 50);
}

TEST_CASE("counter verdict: flaps fail, congestion is a finding", "[accept][counters]") {
  const auto flap = verdict_nic(
      "h2", "ibs-eth", "netdev",
      {verdict_counter(CounterSource::kNetdev, "carrier_changes", CounterKind::kFlaps, 2)});
  const CounterFindings f = judge_counters({flap}, {});
  CHECK(f.flapped);
  CHECK(f.flaps_text == "h2 ibs-eth: carrier_changes +2");
  const auto congested = verdict_nic(
      "h1", "mlx5_0:1", "mlx5",
      {verdict_counter(CounterSource::kHw, "np_cnp_sent", CounterKind::kCongestion, 500),
       verdict_counter(CounterSource::kIbPort, "port_rcv_packets", CounterKind::kTraffic, 9500)});
  const CounterFindings c = judge_counters({congested}, {});
  CHECK_FALSE(c.errors);
  CHECK_FALSE(c.flapped);
  CHECK(c.congested);
  CHECK(c.congestion_pct == Approx(5.0));
  CHECK(c.congestion_text == "h1 mlx5_0:1: np_cnp_sent +500 (5.0 % of events)");
  const auto quiet = verdict_nic(
      "h1", "mlx5_0:1", "mlx5",
      {verdict_counter(CounterSource::kIbPort, "port_rcv_packets", CounterKind::kTraffic, 9500)});
  CHECK(judge_counters({quiet}, {}).summary() == "no error, flap or congestion counter moved");
}

TEST_CASE("counter verdict: deltas of several rows add up per NIC", "[accept][counters]") {
  const auto a =
      verdict_nic("h1", "tcp", "tcp",
                  {verdict_counter(CounterSource::kTcp, "RetransSegs", CounterKind::kErrors, 4)});
  const auto b =
      verdict_nic("h1", "tcp", "tcp",
                  {verdict_counter(CounterSource::kTcp, "RetransSegs", CounterKind::kErrors, 6),
                   verdict_counter(CounterSource::kTcp, "OutSegs", CounterKind::kTraffic, 9)});
  const auto c = verdict_nic("h2", "tcp", "tcp", {});
  const auto sum = fabric::add_deltas({a}, {b, c});
  REQUIRE(sum.size() == 2);
  CHECK(sum[0].sum(CounterKind::kErrors) == 10);
  CHECK(sum[0].interval_s == Approx(2.0));
  CHECK(sum[0].counters.size() == 2);
  CHECK(sum[1].host == "h2");
}

TEST_CASE("link verdict: counters fail a link whose bandwidth passed, and explain a slow one",
          "[accept][counters]") {
  const auto lossy = judge_counters(
      {verdict_nic(
          "h2", "tcp", "tcp",
          {verdict_counter(CounterSource::kTcp, "RetransSegs", CounterKind::kErrors, 1081),
           verdict_counter(CounterSource::kTcp, "OutSegs", CounterKind::kTraffic, 139302)})},
      {});
  const auto clean = judge_counters({}, {});
  std::vector<LinkMeasurement> links(3);
  for (std::size_t i = 0; i < links.size(); ++i) {
    links[i].rank_a = static_cast<int>(i);
    links[i].rank_b = static_cast<int>(i + 1) % 3;
    links[i].host_a = "h" + std::to_string(i);
    links[i].host_b = "h" + std::to_string((i + 1) % 3);
    links[i].measured_gbps = 10;
    links[i].expected_gbps = 10;
    links[i].counters = clean;
  }
  links[1].counters = lossy;
  links[2].measured_gbps = 5;  // slow, and no counter says why
  const AcceptReport r = judge_links(links, Thresholds{});
  CHECK(r.links[0].pass);
  CHECK_FALSE(r.links[1].pass);
  CHECK(r.links[1].reason ==
        "counters: errors: h2 tcp: RetransSegs +1,081 (7,760 ppm of 139,302 packets)");
  CHECK_FALSE(r.links[2].pass);
  CHECK_THAT(r.links[2].reason,
             Catch::EndsWith("; counters: no error, flap or congestion counter moved"));
  CHECK_FALSE(r.pass);
}

TEST_CASE("counter verdict: a link's own NICs, and TCP shared by emulated hosts left out",
          "[accept][counters]") {
  auto nic = [](std::string host, std::string name, std::string scope) {
    auto d = verdict_nic(std::move(host), std::move(name), name == "tcp" ? "tcp" : "mlx5", {});
    d.scope = std::move(scope);
    return d;
  };
  const std::vector<fabric::NicDelta> all{
      nic("h0", "mlx5_0:1", ""), nic("h0", "mlx5_1:1", ""), nic("h0", "tcp", "net:[1]@a"),
      nic("h1", "mlx5_0:1", ""), nic("h1", "mlx5_1:1", ""), nic("h1", "tcp", "net:[2]@b")};
  // Rail 1 to rail 1 over RDMA: only those two ports.
  auto rail = link_nics(all, "h0", "mlx5_1", "h1", "mlx5_1:1", false);
  REQUIRE(rail.size() == 2);
  CHECK(rail[0].nic == "mlx5_1:1");
  CHECK(rail[1].host == "h1");
  // Over TCP through an unknown device: every NIC of each host, TCP included.
  CHECK(link_nics(all, "h0", "ib0", "h1", "ib0", true).size() == 6);
  // Two emulated hosts in one namespace: their TCP counters are the machine's, not the link's.
  std::vector<fabric::NicDelta> shared{nic("e0", "tcp", "net:[1]@a"),
                                       nic("e1", "tcp", "net:[1]@a")};
  CHECK(link_nics(shared, "e0", "lo", "e1", "lo", true).empty());
}
