// `ibscope watch`'s pure logic over synthetic readings: rates per NIC, the interval findings
// (errors, flaps, congestion), rail imbalance (a lagging rail, an idle node, one NIC, two NICs,
// an idle management interface), the state across intervals (the window, totals, counters'
// growth, findings raised once), and its outputs: the summary table, the Prometheus text, the
// JSONL line, the log file's refusal to overwrite, and the log read back as report charts.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/temp_dir.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/fabric/watch.hpp"
#include "ibscope/fabric/watch_state.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/output/watch_prometheus.hpp"
#include "ibscope/output/watch_summary.hpp"
#include "ibscope/results/watch_log.hpp"

using namespace ibscope;
using namespace ibscope::fabric;

namespace {

// An mlx5 port whose port_xmit_data counts 4-octet words.
NicSample watch_mlx5_port(const std::string& nic, std::uint64_t xmit_words,
                          std::uint64_t symbol_errors = 0, std::uint64_t cnps = 0,
                          std::uint64_t link_downed = 0) {
  NicSample s;
  s.nic = nic;
  s.driver = "mlx5";
  s.values = {{CounterSource::kIbPort, "port_xmit_data", xmit_words},
              {CounterSource::kIbPort, "port_rcv_data", 0},
              {CounterSource::kIbPort, "symbol_error", symbol_errors},
              {CounterSource::kIbPort, "link_downed", link_downed},
              {CounterSource::kHw, "np_cnp_sent", cnps}};
  return s;
}

NicSample watch_interface(const std::string& nic, std::uint64_t rx_bytes, std::uint64_t tx_bytes,
                          std::uint64_t carrier_changes = 0) {
  NicSample s;
  s.nic = nic;
  s.driver = "netdev";
  s.values = {{CounterSource::kNetdev, "rx_bytes", rx_bytes},
              {CounterSource::kNetdev, "tx_bytes", tx_bytes},
              {CounterSource::kNetdev, "carrier_changes", carrier_changes}};
  return s;
}

CounterSnapshot watch_snapshot(double time_s, std::vector<NicSample> nics) {
  CounterSnapshot s;
  s.time_s = time_s;
  s.nics = std::move(nics);
  return s;
}

bool watch_has_finding(const std::vector<WatchFinding>& findings, WatchFindingKind kind,
                       const std::string& nic) {
  for (const auto& f : findings) {
    if (f.kind == kind && f.nic == nic) return true;
  }
  return false;
}

// 8 rails at 10 GB/s each (2.5e9 words/s), rail 3 stopping after `stop_after_s`.
CounterSnapshot watch_eight_rails_at(double t, double stop_after_s) {
  std::vector<NicSample> nics;
  for (int i = 0; i < 8; ++i) {
    const double moving_s = i == 3 ? std::min(t, stop_after_s) : t;
    nics.push_back(
        watch_mlx5_port(fmt::format("mlx5_{}:1", i), static_cast<std::uint64_t>(moving_s * 2.5e9)));
  }
  return watch_snapshot(t, std::move(nics));
}

}  // namespace

TEST_CASE("watch: rates of one interval", "[watch]") {
  const auto before = watch_snapshot(
      10, {watch_mlx5_port("mlx5_0:1", 1000, 5, 0, 1), watch_interface("eth0", 100, 200)});
  const auto after = watch_snapshot(10.5, {watch_mlx5_port("mlx5_0:1", 1000 + 250'000, 7, 3, 2),
                                           watch_interface("eth0", 1100, 1200, 2)});
  const auto deltas = counter_deltas(before, after);
  REQUIRE(deltas.size() == 2);
  const NicRates port = nic_rates(deltas[0]);
  CHECK(port.traffic_bytes == 1'000'000);  // words x 4
  CHECK(port.bytes_per_s == Approx(2e6));
  CHECK(port.errors == 2);
  CHECK(port.congestion == 3);
  CHECK(port.flaps == 1);
  const NicRates eth = nic_rates(deltas[1]);
  CHECK(eth.traffic_bytes == 2000);
  CHECK(eth.bytes_per_s == Approx(4000));
  CHECK(eth.flaps == 2);

  const auto findings = interval_findings(deltas);
  CHECK(watch_has_finding(findings, WatchFindingKind::kErrors, "mlx5_0:1"));
  CHECK(watch_has_finding(findings, WatchFindingKind::kCongestion, "mlx5_0:1"));
  CHECK(watch_has_finding(findings, WatchFindingKind::kFlap, "mlx5_0:1"));
  CHECK(watch_has_finding(findings, WatchFindingKind::kFlap, "eth0"));
  CHECK_FALSE(watch_has_finding(findings, WatchFindingKind::kErrors, "eth0"));
  CHECK(findings.front().detail == "symbol_error +2");

  SECTION("an error counter stuck at its saturating maximum is a finding: growth unknown") {
    const auto stuck = counter_deltas(watch_snapshot(0, {watch_mlx5_port("mlx5_0:1", 0, 65535)}),
                                      watch_snapshot(1, {watch_mlx5_port("mlx5_0:1", 0, 65535)}));
    const auto f = interval_findings(stuck);
    REQUIRE(f.size() == 1);
    CHECK(f[0].kind == WatchFindingKind::kErrors);
    CHECK(f[0].detail == "symbol_error at its maximum (saturated: growth unknown)");
    WatchState state({}, watch_snapshot(0, {watch_mlx5_port("mlx5_0:1", 0, 65535)}));
    state.add(watch_snapshot(1, {watch_mlx5_port("mlx5_0:1", 0, 65535)}));
    CHECK_THAT(output::watch_summary(state, "h"),
               Catch::Contains("mlx5_0:1: errors: symbol_error at its maximum"));
  }
  SECTION("a NIC that vanishes or appears is a flap") {
    const auto gone = counter_deltas(after, watch_snapshot(11, {watch_interface("eth1", 0, 0)}));
    const auto f = interval_findings(gone);
    CHECK(watch_has_finding(f, WatchFindingKind::kFlap, "eth1"));      // appeared
    CHECK(watch_has_finding(f, WatchFindingKind::kFlap, "mlx5_0:1"));  // vanished
    CHECK(watch_has_finding(f, WatchFindingKind::kFlap, "eth0"));
  }
}

TEST_CASE("watch: rail imbalance among the NICs of a node", "[watch]") {
  const WatchThresholds t;  // 10 %, 1 MB/s
  auto rails = [](std::vector<double> rates, std::string driver = "mlx5") {
    std::vector<RailTraffic> out;
    for (std::size_t i = 0; i < rates.size(); ++i) {
      out.push_back({fmt::format("nic{}", i), driver, rates[i], true});
    }
    return out;
  };
  SECTION("one rail far under the median is found, the others not") {
    const auto f = rail_imbalance(rails({10e9, 10e9, 9e9, 0.5e9, 10e9, 11e9, 10e9, 10e9}), t, 10);
    REQUIRE(f.size() == 1);
    CHECK(f[0].nic == "nic3");
    CHECK(f[0].kind == WatchFindingKind::kRailImbalance);
    CHECK_THAT(f[0].detail, Catch::Contains("5.0 % of the median mlx5 NIC"));
  }
  SECTION("just above the threshold is not") {
    CHECK(rail_imbalance(rails({10e9, 10e9, 1.01e9, 10e9}), t, 10).empty());
  }
  SECTION("an idle node (median under the minimum rate) is not imbalanced") {
    CHECK(rail_imbalance(rails({0.5e6, 0.5e6, 0, 0.5e6}), t, 10).empty());
    CHECK(rail_imbalance(rails({0, 0, 0, 0}), t, 10).empty());
  }
  SECTION("a node with one NIC has nothing to compare") {
    CHECK(rail_imbalance(rails({0}), t, 10).empty());
    CHECK(rail_imbalance(rails({10e9}), t, 10).empty());
  }
  SECTION("two NICs: an idle one beside a busy one is found") {
    const auto f = rail_imbalance(rails({10e9, 0}), t, 10);
    REQUIRE(f.size() == 1);
    CHECK(f[0].nic == "nic1");
  }
  SECTION("NICs not compared, the namespace's TCP and other drivers stay apart") {
    auto r = rails({10e9, 10e9, 0});
    r[2].compared = false;  // an interface that never carried traffic
    CHECK(rail_imbalance(r, t, 10).empty());
    auto mixed = rails({10e9, 10e9});
    mixed.push_back({"eth0", "netdev", 0, true});
    mixed.push_back({"tcp", "tcp", 0, true});
    CHECK(rail_imbalance(mixed, t, 10).empty());  // eth0 alone among interfaces
  }
  SECTION("--imbalance-pct 0 turns it off") {
    WatchThresholds off;
    off.imbalance_fraction = 0;
    CHECK(rail_imbalance(rails({10e9, 0}), off, 10).empty());
  }
}

TEST_CASE("watch: a rail that stops is found once the window is full, and said once", "[watch]") {
  WatchThresholds t;
  t.imbalance_window_s = 5;
  WatchState state(t, watch_eight_rails_at(0, 3));
  int found_at = -1, announced = 0;
  for (int s = 1; s <= 12; ++s) {
    const WatchInterval iv = state.add(watch_eight_rails_at(s, 3));
    CHECK(iv.interval_s == Approx(1));
    REQUIRE(iv.rates.size() == 8);
    CHECK(iv.rates[0].bytes_per_s == Approx(10e9));
    const bool found = watch_has_finding(iv.findings, WatchFindingKind::kRailImbalance, "mlx5_3:1");
    if (found && found_at < 0) found_at = s;
    for (const auto& f : iv.new_findings) {
      if (f.kind == WatchFindingKind::kRailImbalance) ++announced;
    }
    for (int other : {0, 1, 2, 4, 5, 6, 7}) {
      CHECK_FALSE(watch_has_finding(iv.findings, WatchFindingKind::kRailImbalance,
                                    fmt::format("mlx5_{}:1", other)));
    }
  }
  // Stopped at 3 s: the 5 s window holds none of its traffic from 8 s on (at 7 s it held 20 %).
  CHECK(found_at == 8);
  CHECK(announced == 1);
  const auto& totals = state.totals();
  REQUIRE(totals.size() == 8);
  CHECK(totals[3].traffic_bytes == 30'000'000'000ULL);
  CHECK(totals[3].imbalanced_intervals == 5);
  CHECK(totals[0].average_bytes_per_s() == Approx(10e9));
  CHECK(totals[0].peak_bytes_per_s == Approx(10e9));
  CHECK(state.elapsed_s() == Approx(12));
  // Over the whole watch rail 3 moved 25 % of the median: not under 10 %.
  CHECK(state.whole_run_imbalance().empty());
}

TEST_CASE("watch: --rails compares only the NICs named", "[watch]") {
  CHECK(is_listed_rail("mlx5_0:1", {"mlx5_0"}));
  CHECK(is_listed_rail("mlx5_0:1", {"mlx5_0:1"}));
  CHECK_FALSE(is_listed_rail("mlx5_10:1", {"mlx5_1"}));
  CHECK_FALSE(is_listed_rail("mlx5_0:2", {"mlx5_0:1"}));
  CHECK(is_listed_rail("eth0", {"eth1", "eth0"}));
  // 8 compute rails and a storage NIC that moves little: found unless the rails are named.
  auto with_storage = [](double t) {
    CounterSnapshot s = watch_eight_rails_at(t, 1e9);
    s.nics.push_back(watch_mlx5_port("mlx5_8:1", static_cast<std::uint64_t>(t * 1e6)));
    return s;
  };
  WatchThresholds all;
  all.imbalance_window_s = 2;
  WatchThresholds named = all;
  named.rails = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"};
  WatchState every(all, with_storage(0)), rails_only(named, with_storage(0));
  bool found_every = false, found_named = false;
  for (int s = 1; s <= 4; ++s) {
    found_every = found_every || watch_has_finding(every.add(with_storage(s)).findings,
                                                   WatchFindingKind::kRailImbalance, "mlx5_8:1");
    found_named = found_named || !rails_only.add(with_storage(s)).findings.empty();
  }
  CHECK(found_every);
  CHECK_FALSE(found_named);
}

TEST_CASE("watch: idle periods and an idle management interface are not findings", "[watch]") {
  WatchThresholds t;
  t.imbalance_window_s = 2;
  // Interfaces only (a host without RDMA): eth0 carries the job, eno1 never moves.
  auto at = [](double s, double eth0_bytes) {
    return watch_snapshot(s, {watch_interface("eth0", static_cast<std::uint64_t>(eth0_bytes), 0),
                              watch_interface("eno1", 500, 500),
                              watch_interface("eth1", static_cast<std::uint64_t>(eth0_bytes), 0)});
  };
  WatchState state(t, at(0, 0));
  double eth0 = 0;
  for (int s = 1; s <= 10; ++s) {
    if (s > 4) eth0 += 50e6;  // idle for 4 s, then 50 MB/s on eth0 and eth1 alike
    const auto iv = state.add(at(s, eth0));
    CHECK(iv.findings.empty());
  }
  CHECK(state.whole_run_imbalance().empty());
}

TEST_CASE("watch: error growth, congestion share and counters' totals", "[watch]") {
  WatchState state({}, watch_snapshot(0, {watch_mlx5_port("mlx5_0:1", 0)}));
  auto iv = state.add(watch_snapshot(1, {watch_mlx5_port("mlx5_0:1", 100, 17, 4)}));
  CHECK(watch_has_finding(iv.new_findings, WatchFindingKind::kErrors, "mlx5_0:1"));
  CHECK(watch_has_finding(iv.new_findings, WatchFindingKind::kCongestion, "mlx5_0:1"));
  iv = state.add(watch_snapshot(2, {watch_mlx5_port("mlx5_0:1", 200, 20, 4)}));
  CHECK(watch_has_finding(iv.findings, WatchFindingKind::kErrors, "mlx5_0:1"));
  CHECK(iv.new_findings.empty());  // still growing: raised the interval before
  iv = state.add(watch_snapshot(3, {watch_mlx5_port("mlx5_0:1", 300, 20, 4)}));
  CHECK(iv.findings.empty());
  iv = state.add(watch_snapshot(4, {watch_mlx5_port("mlx5_0:1", 400, 20, 8)}));
  const NicTotals& t = state.totals().front();
  CHECK(t.errors == 20);
  CHECK(t.errors_by_counter.at("symbol_error") == 20);
  CHECK(t.congestion == 8);
  CHECK(t.congested_intervals == 2);
  CHECK(t.congested_share() == Approx(0.5));
  bool seen = false;
  for (const auto& c : state.counter_totals()) {
    if (c.name == "port_xmit_data") {
      CHECK(c.total == 400);
      CHECK(c.kind == CounterKind::kTraffic);
      seen = true;
    }
    if (c.name == "port_rcv_data") CHECK(c.total == 0);  // never moved: still a series
  }
  CHECK(seen);
}

TEST_CASE("watch: the summary table, the Prometheus text and the JSONL line", "[watch]") {
  WatchState state(
      {}, watch_snapshot(0, {watch_mlx5_port("mlx5_0:1", 0), watch_mlx5_port("mlx5_1:1", 0)}));
  const auto iv = state.add(watch_snapshot(
      2, {watch_mlx5_port("mlx5_0:1", 500'000'000, 3), watch_mlx5_port("mlx5_1:1", 500'000'000)}));

  const std::string summary = output::watch_summary(state, "node017");
  CHECK_THAT(summary, Catch::Contains("moved(MB)"));
  CHECK_THAT(summary, Catch::Contains("avg(MB/s)"));
  CHECK_THAT(summary, Catch::Contains("congested(%)"));
  CHECK_THAT(summary, Catch::Contains("mlx5_1:1"));
  CHECK_THAT(summary, Catch::Contains("2000.000"));  // 5e8 words x 4 B = 2000 MB
  CHECK_THAT(summary, Catch::Contains("1000.000"));  // over 2 s
  CHECK_THAT(summary, Catch::Contains("mlx5_0:1: errors: symbol_error +3"));

  const std::string prom = output::prometheus::exposition_text(
      output::prometheus::watch_metrics(state, iv, "node017", 1.7e9));
  CHECK_THAT(prom, Catch::Contains("# TYPE ibscope_nic_counter_total counter\n"));
  CHECK_THAT(prom, Catch::Contains("# TYPE ibscope_nic_rate_bytes_per_second gauge\n"));
  CHECK_THAT(prom,
             Catch::Contains("ibscope_nic_counter_total{host=\"node017\",nic=\"mlx5_0:1\","
                             "source=\"ib_port\",counter=\"port_xmit_data\",kind=\"traffic\"} "
                             "500000000\n"));
  CHECK_THAT(prom, Catch::Contains("ibscope_nic_rate_bytes_per_second{host=\"node017\",nic=\"mlx5_"
                                   "1:1\"} 1000000000\n"));
  CHECK_THAT(prom, Catch::Contains("ibscope_nic_finding{host=\"node017\",nic=\"mlx5_0:1\","
                                   "finding=\"errors\"} 1\n"));
  CHECK_THAT(prom, Catch::Contains("ibscope_nic_finding{host=\"node017\",nic=\"mlx5_1:1\","
                                   "finding=\"errors\"} 0\n"));
  // Every sample line is `name{labels} value`.
  std::istringstream lines(prom);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) continue;
    INFO(line);
    CHECK(line.find("} ") != std::string::npos);
  }

  const std::string line = results::watch_log_line(iv, "node017", 1.7e9 + 0.25, 2);
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  const auto j = nlohmann::json::parse(line);
  CHECK(j["host"] == "node017");
  CHECK(j["time_utc"] == "2023-11-14T22:13:20.250Z");
  CHECK(j["interval_s"].get<double>() == Approx(2));
  REQUIRE(j["nics"].size() == 2);
  CHECK(j["nics"][0]["bytes"] == 2'000'000'000ULL);
  CHECK(j["nics"][0]["errors"] == 3);
  CHECK(j["findings"][0]["kind"] == "errors");
  CHECK(j["findings"][0]["nic"] == "mlx5_0:1");
}

TEST_CASE("watch: the log is never overwritten unless appending is asked", "[watch]") {
  test::TempDir dir;
  const std::string path = (dir.path() / "watch.jsonl").string();
  {
    results::WatchLog log(path, false);
    log.write("{\"a\":1}\n");
  }
  CHECK_THROWS_AS(results::WatchLog(path, false), SystemError);
  try {
    results::WatchLog again(path, false);
  } catch (const SystemError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--append"));
  }
  {
    results::WatchLog log(path, true);
    log.write("{\"a\":2}\n");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "{\"a\":1}\n{\"a\":2}\n");
}

TEST_CASE("watch: a log read back renders as per-NIC rate and counter charts", "[watch][report]") {
  test::TempDir dir;
  const std::string path = (dir.path() / "node.jsonl").string();
  {
    results::WatchLog log(path, false);
    WatchState state(
        {}, watch_snapshot(0, {watch_mlx5_port("mlx5_0:1", 0), watch_mlx5_port("mlx5_1:1", 0)}));
    for (int s = 1; s <= 3; ++s) {
      const auto iv = state.add(watch_snapshot(
          s, {watch_mlx5_port("mlx5_0:1", 250'000u * static_cast<std::uint64_t>(s), 2u * s),
              watch_mlx5_port("mlx5_1:1", 250'000u * static_cast<std::uint64_t>(s))}));
      log.write(results::watch_log_line(iv, "node<7>", 1.7e9 + s, s));
    }
  }
  const auto lines = results::load_watch_log(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].host == "node<7>");
  REQUIRE(lines[0].nics.size() == 2);
  CHECK(lines[0].nics[0].bytes_per_s == Approx(1e6));
  CHECK(lines[0].nics[0].errors == 2);
  REQUIRE(lines[0].findings.size() == 1);
  CHECK(lines[0].findings[0].kind == "errors");

  output::ReportOptions o;
  o.watch_logs.push_back({path, "node", lines});
  const std::string page = output::html_report({}, o);
  CHECK_THAT(page, Catch::Contains("data-section=\"watch\""));
  CHECK_THAT(page, Catch::Contains("data-chart=\"watch-rate-0\""));
  CHECK_THAT(page, Catch::Contains("data-series=\"mlx5_1:1\" data-points=\"3\""));
  CHECK_THAT(page, Catch::Contains("data-chart=\"watch-errors-0\""));
  CHECK_THAT(page, Catch::Contains("data-series=\"mlx5_0:1 errors\""));
  CHECK_THAT(page, !Catch::Contains("data-series=\"mlx5_1:1 errors\""));
  CHECK_THAT(page, Catch::Contains("node&lt;7&gt;"));  // escaped
  CHECK_THAT(page, !Catch::Contains("node<7>"));
  // Without a watch log the section is not there at all.
  CHECK_THAT(output::html_report({}, {}), !Catch::Contains("data-section=\"watch\""));

  std::ofstream(path, std::ios::app) << "{\"host\": 1}\n";
  CHECK_THROWS_WITH(results::load_watch_log(path), Catch::Contains("node.jsonl:4:"));
}
