// accept --baseline's judging (accept/history.hpp): a link fails only when it is both beyond the
// threshold below its past median and outside its noise band; the class reference warns.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ibscope/accept/history.hpp"
#include "ibscope/accept/link_verdict.hpp"
#include "ibscope/cli/accept_baseline.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/measure/robust_stats.hpp"

namespace acc = ibscope::accept;

namespace {

acc::LinkHistory history_link(double median, double spread) {
  acc::LinkHistory l{"h3", "h4", "mlx5_2:1", "mlx5_2:1", {}, {}};
  l.bw_gbps.n = 5;
  l.bw_gbps.median = median;
  l.bw_gbps.spread = spread;
  return l;
}

}  // namespace

TEST_CASE("history: a drop beyond the threshold and the noise band fails, with its reason",
          "[accept][baseline]") {
  const acc::LinkHistory past = history_link(47.7, 0.286);  // spread ±0.6 %
  const acc::HistoryThresholds t;                           // 10 %, 3 spreads
  const auto f = acc::judge_history(&past, 41.0, std::nullopt, t);
  CHECK(f.known);
  CHECK(f.below);
  CHECK(f.drop_pct == Approx(100 * (47.7 - 41.0) / 47.7));
  CHECK_THAT(f.reason, Catch::Contains("41.00 GB/s is 14 % below its baseline (median of 5 runs "
                                       "47.70 GB/s, spread ±0.6 %"));
  // 8 % below: inside the threshold.
  CHECK_FALSE(acc::judge_history(&past, 47.7 * 0.92, std::nullopt, t).below);
  // 15 % below a noisy past (spread 6 GB/s): inside the noise band.
  const acc::LinkHistory noisy = history_link(47.7, 6.0);
  CHECK_FALSE(acc::judge_history(&noisy, 47.7 * 0.85, std::nullopt, t).below);
  // Faster than its past: never a failure.
  CHECK_FALSE(acc::judge_history(&past, 60, std::nullopt, t).below);
  // Unknown link: no verdict.
  const auto unknown = acc::judge_history(nullptr, 1.0, std::nullopt, t);
  CHECK_FALSE(unknown.known);
  CHECK_FALSE(unknown.below);
}

TEST_CASE("history: the class reference is compared and named", "[accept][baseline]") {
  const acc::ClassReference ref{"ConnectX-7 NDR", 46.875, "https://example.org: 375 Gb/s"};
  const auto f = acc::judge_history(nullptr, 41.7, ref, {});
  CHECK(f.below_reference);
  CHECK(f.reference_drop_pct == Approx(100 * (46.875 - 41.7) / 46.875));
  CHECK_THAT(f.reference_reason, Catch::Contains("11 % below the reference for ConnectX-7 NDR"));
  CHECK_FALSE(acc::judge_history(nullptr, 46.0, ref, {}).below_reference);
}

TEST_CASE("history: links are found in either order - a failed link fails the verdict",
          "[accept][baseline]") {
  acc::History h;
  h.links.push_back(history_link(47.7, 0.2));
  CHECK(h.find_link("h4", "mlx5_2:1", "h3", "mlx5_2:1") != nullptr);
  CHECK(h.find_link("h3", "mlx5_2:1", "h4", "mlx5_1:1") == nullptr);
  std::vector<acc::LinkMeasurement> links;
  for (int i = 0; i < 3; ++i) {
    acc::LinkMeasurement m;
    m.rank_a = i;
    m.rank_b = (i + 1) % 3;
    m.host_a = "h" + std::to_string(i);
    m.host_b = "h" + std::to_string((i + 1) % 3);
    m.measured_gbps = 45;
    m.expected_gbps = 49.68;
    links.push_back(m);
  }
  links[1].history = acc::judge_history(&h.links[0], 40.0, std::nullopt, {});
  const acc::AcceptReport report = acc::judge_links(links, acc::Thresholds{});
  CHECK_FALSE(report.pass);
  CHECK(report.links[0].pass);
  CHECK_FALSE(report.links[1].pass);
  CHECK_THAT(report.links[1].reason, Catch::StartsWith("baseline: 40.00 GB/s is 16 % below"));
  CHECK(report.links[2].pass);
}

TEST_CASE("history: collective rows below their past warn", "[accept][baseline]") {
  acc::History h;
  acc::RowHistory r{"allreduce", "ring", "float32", 4 << 20, 4, {}, {}};
  r.busbw_gbps = ibscope::measure::robust_stats(std::vector<double>{10, 10.1, 9.9, 10, 10});
  h.rows.push_back(r);
  const std::vector<acc::RowFigure> rows{{"allreduce", "ring", "float32", 4 << 20, 4, 8.0},
                                         {"allreduce", "ring", "float32", 4 << 20, 8, 1.0},
                                         {"allreduce", "ring", "float32", 64 << 10, 4, 1.0}};
  const auto w = acc::row_history_warnings(rows, h, {});
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("busbw 8.00 GB/s is 20 % below its baseline"));
}

TEST_CASE("history: a baseline file fills the history - the shipped reference matches NDR",
          "[accept][baseline]") {
  namespace res = ibscope::results;
  res::Baseline measured;
  measured.runs.resize(5);
  measured.hardware = res::HardwareSignature{.nic_model = "mlx5",
                                             .port_speed = "NDR",
                                             .link_rate_gbit = 400,
                                             .link_layer = "InfiniBand",
                                             .gpu_model = "",
                                             .hosts = 2,
                                             .transport = "verbs"};
  res::BaselineLink link{"h0", "h1", "mlx5_0:1", "mlx5_0:1", {}, {}};
  link.bw_gbps = ibscope::measure::robust_stats(std::vector<double>{47.6, 47.7, 47.8});
  measured.links.push_back(link);
  acc::History h = ibscope::cli::history_of(measured, "b.json");
  CHECK(h.source == "b.json (measured, 5 runs)");
  REQUIRE(h.links.size() == 1);
  CHECK(h.find_link("h1", "mlx5_0:1", "h0", "mlx5_0:1") != nullptr);
  CHECK_FALSE(h.reference);
  // The run's topology: two hosts with one ACTIVE NDR port each.
  std::vector<ibscope::topo::HostTopology> hosts(2);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    hosts[i].host = "h" + std::to_string(i);
    ibscope::topo::Nic nic;
    nic.name = "mlx5_0";
    ibscope::topo::NicPort port;
    port.state = "ACTIVE";
    port.link_layer = "InfiniBand";
    port.speed = "NDR";
    port.data_rate_gbit_s = 400;
    nic.ports.push_back(port);
    hosts[i].nics.push_back(nic);
  }
  std::vector<std::string> warnings;
  const acc::History done = ibscope::cli::complete_history(h, measured, hosts, warnings);
  CHECK(warnings.empty());
  REQUIRE(done.reference);
  CHECK(done.reference->link_bw_gbps == Approx(46.875));
  CHECK_THAT(done.reference->source, Catch::Contains("azurehpc-health-checks"));
  // Other hardware than the baseline's: said.
  hosts[1].nics[0].ports[0].speed = "HDR";
  (void)ibscope::cli::complete_history(h, measured, hosts, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("made on other hardware"));
  // A reference file given as the baseline: its figure is the class reference.
  const auto refs = res::shipped_references();
  const acc::History from_ref = ibscope::cli::history_of(refs.front(), "r.json");
  CHECK(from_ref.links.empty());
  REQUIRE(from_ref.reference);
  CHECK(from_ref.reference->link_bw_gbps > 0);
}

TEST_CASE("accept --baseline db: the window starts N whole days before now, across months",
          "[baseline][history]") {
  using ibscope::cli::utc_days_before;
  CHECK(utc_days_before("2026-12-07T15:56:38Z", 30) == "2026-11-07T15:56:38Z");
  CHECK(utc_days_before("2026-03-01T00:00:05Z", 1) == "2026-02-28T00:00:05Z");
  CHECK(utc_days_before("2028-03-01T23:59:59Z", 1) == "2028-02-29T23:59:59Z");  // leap year
  CHECK(utc_days_before("2027-01-01T01:02:03Z", 365) == "2026-01-01T01:02:03Z");
  CHECK_THROWS_AS(utc_days_before("yesterday", 1), ibscope::UsageError);
}
