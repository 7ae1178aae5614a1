// The acceptance and soak sections' JSON (src/results/section_json.hpp, white box): a filled
// section survives to_json -> reader -> to_json, files written by `ibscope accept` and
// `ibscope soak` (the fuzz seeds) write back byte for byte, and the readers' own errors (what
// the schema leaves open) name the source and the JSON path.

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/text_lines.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"
#include "results/section_json.hpp"

using nlohmann::json;
namespace results = ibscope::results;

namespace {

results::Acceptance filled_acceptance() {
  results::Acceptance a;
  a.pass = false;
  a.transport = results::AcceptTransport::kVerbs;
  a.thresholds = results::AcceptThresholds{.min_fraction = 0.9,
                                           .mad_k = 4,
                                           .mad_floor_fraction = 0.02,
                                           .max_latency_ratio = 3,
                                           .retests = 2,
                                           .straggler_min_last_fraction = 0.75,
                                           .straggler_min_late_fraction = 0.25,
                                           .straggler_min_late_us = 50};
  a.expect_line_gbit = 400;
  a.preflight = results::AcceptPreflight{
      .pass = false,
      .rdma_everywhere = false,
      .no_rdma_reason = "h2: no RDMA device",
      .fabric_data_rate_gbit = 387.5,
      .link_layer = "InfiniBand",
      .active_mtu_bytes = 4096,
      .findings = {{"h1", "mlx5_0", false, "MTU 2048"}, {"h2", "", true, "no RDMA device"}}};
  results::Loopback loopback{.ran = true,
                             .skipped_reason = "",
                             .slow_pct = 25,
                             .min_fraction = 0.5,
                             .budget_s = 20,
                             .size_bytes = 1 << 20,
                             .nics = {}};
  results::LoopbackNic nic;
  nic.host = "h1";
  nic.nic = "mlx5_2";
  nic.memory = "cuda:1";
  nic.data_rate_gbyte_s = 50;
  nic.pcie_gbyte_s = 7.88;
  nic.path = "NUMA 1 → pci 0000:17:00.0 (x4, 7.88 GB/s)";
  nic.size_bytes = 1 << 20;
  nic.iterations = 2000;
  nic.write_gbyte_s = 5.25;
  nic.read_gbyte_s = 5.5;
  nic.read_lat_us = 3.25;
  nic.elapsed_s = 1.5;
  nic.siblings = 7;
  nic.siblings_write_gbyte_s = 23.5;
  nic.siblings_read_gbyte_s = 22.75;
  nic.ceiling_gbyte_s = 7.88;
  nic.failures = {"mlx5_2 loopback write 5.25 GB/s, 78 % below ..."};
  nic.notes = {"a note"};
  loopback.nics.push_back(nic);
  nic.nic = "rxe0";
  nic.error = "port 1 is DOWN";
  nic.pass = false;
  loopback.nics.push_back(nic);
  a.preflight->loopback = loopback;
  for (int b = 1; b <= 2; ++b) {
    a.links.push_back(results::AcceptLink{.rank_a = 0,
                                          .rank_b = b,
                                          .host_a = "h0",
                                          .host_b = "h" + std::to_string(b),
                                          .nic_a = "mlx5_0:1",
                                          .nic_b = "mlx5_1:1",
                                          .measured_gbps = b == 1 ? 48.25 : 11.5,
                                          .gbps_a_to_b = 48.5,
                                          .gbps_b_to_a = b == 1 ? 48.25 : 11.5,
                                          .expected_gbps = b == 1 ? 49.68 : std::nan(""),
                                          .line_rate_gbit = 400,
                                          .link_kind = "InfiniBand NDR",
                                          .fraction_of_expected = 0.97,
                                          .peers_median_gbps = 30,
                                          .latency_us = 2.5,
                                          .peers_median_latency_us = 2.25,
                                          .attempts = b + 1,
                                          .transports = "rc_mlx5/mlx5_0:1",
                                          .below_expected = b == 2,
                                          .outlier = b == 2,
                                          .slow_latency = false,
                                          .pass = b == 1,
                                          .reason = b == 1 ? "" : "below expected"});
  }
  a.hosts = {{"h0", 2, 1, false, true, ""}, {"h2", 1, 1, true, false, "every link failed"}};
  a.nics = {{"h2", "mlx5_1:1", 1, 1, false, false}};
  a.median_gbps = 30;
  a.mad_gbps = 18.375;
  a.median_latency_us = std::nan("");
  a.retest_rounds = 1;
  a.notes = {"no absolute test for links without a known rate"};
  a.allreduce = results::AcceptAllreduce{6, 3};
  a.stragglers = results::Stragglers{
      .clock_uncertainty_us = 3.5,
      .ranks = {{0, "h0", 20, 1, 0.05, 0, 0}, {2, "h2", 20, 19, 0.95, 80.5, 0.4}},
      .rows = {{"ring", 1 << 20, true, {{0.0, 1.5, 80.0}, {0.0, std::nan(""), 81.0}}}},
      .straggler = results::NamedStraggler{2, "h2"},
      .reason = "rank 2 (h2) last in 95 % of iterations"};
  a.congestion = results::AcceptCongestion{
      .pass = false,
      .by_host = true,
      .victim_ranks = {0, 2},
      .victim_hosts = {"h0", "h2"},
      .congestor_ranks = 6,
      .congestor_hosts = 6,
      .victim_pairs = 1,
      .latency_bytes = 8,
      .allreduce_bytes = 1 << 20,
      .congestor_bytes = 1 << 20,
      .latency_iters = 200,
      .allreduce_iters = 20,
      .max_impact = 2,
      .max_tail_impact = 4,
      .impacts = {{"incast", "latency_p50_us", 2.5, 40, 16, 2, false, false},
                  {"incast", "busbw_gbps", 10, 0, std::nan(""), 2, false, false}},
      .loads = {{"incast", 17, 1.5, 0.25}}};
  return a;
}

results::Soak filled_soak() {
  results::Soak s;
  s.params.collective = "allreduce";
  s.params.root = 0;
  s.params.tuning_source = "tuning.json";
  s.params.min_bytes = 4096;
  s.params.max_bytes = 4 << 20;
  s.params.sizes_bytes = {4096, 4 << 20};
  s.params.types = {"float", "bfloat16"};
  s.params.ops = {"sum"};
  s.params.algorithms = {"ring", "rhd"};
  s.params.chunk_bytes = 1 << 20;
  s.params.timeout_s = 60;
  s.params.mem = "cuda";
  s.params.mem_path = "staged";
  s.params.stage_chunk_bytes = 8 << 20;
  s.params.in_place = false;
  s.params.verify_every_iteration = true;
  s.params.duration_s = 3600;
  s.params.window_s = 30;
  s.params.thresholds = {.max_rss_growth_bytes = 1 << 20, .max_drift = 0.2};
  for (int i = 0; i < 3; ++i) {
    ibscope::measure::SoakWindow w;
    w.index = i;
    w.start_s = 30.0 * i;
    w.end_s = 30.0 * (i + 1);
    w.rss_bytes = {100u << 20, 101u << 20};
    w.cases.push_back({.algorithm = "ring",
                       .type = "float",
                       .op = "sum",
                       .size_bytes = 4096,
                       .iterations = 1000,
                       .time_us = {1000, 10, 12.5, 20, 25, 30, 13, 1.5},
                       .algbw_gbps = 0.32,
                       .busbw_gbps = 0.48,
                       .wrong = static_cast<std::uint64_t>(i)});
    s.windows.push_back(std::move(w));
  }
  s.summary =
      ibscope::measure::SoakSummary{.windows = 3,
                                    .steady_windows = 2,
                                    .cases = {{.algorithm = "ring",
                                               .type = "float",
                                               .op = "sum",
                                               .size_bytes = 4096,
                                               .first_window = 1,
                                               .last_window = 2,
                                               .first_p50_us = 12.5,
                                               .last_p50_us = 15,
                                               .p50_ratio = 1.2,
                                               .first_busbw_gbps = 0.48,
                                               .last_busbw_gbps = 0.4,
                                               .busbw_ratio = 0.833,
                                               .p50_trend_per_hour = 0.05,
                                               .busbw_trend_per_hour = -0.04}},
                                    .rss_growth_bytes = {0, -4096},
                                    .wrong = 3,
                                    .pass = false,
                                    .reasons = {"3 wrong elements", "ring 4 KiB: p50 +20 %"}};
  return s;
}

template <typename F>
std::string message_of(F&& read) {
  try {
    read();
  } catch (const ibscope::UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("results sections: a filled acceptance section writes, reads and writes the same",
          "[results]") {
  // Through text, as a file holds it (NaN is written as null).
  const json first = json::parse(results::to_json(filled_acceptance()).dump());
  const results::Acceptance back = results::acceptance_from_json(first, "f.json");
  CHECK(results::to_json(back).dump(1) == first.dump(1));
  CHECK(back.transport == results::AcceptTransport::kVerbs);
  CHECK(first["transport"] == "verbs");
  // Unknown figures: NaN in the type, null in the file.
  CHECK(first["links"][1]["expected_gbps"].is_null());
  CHECK(std::isnan(back.links[1].expected_gbps));
  CHECK(first["median_latency_us"].is_null());
  CHECK(std::isnan(back.stragglers->rows[0].arrival_us[1][1]));
  CHECK(back.stragglers->straggler->host == "h2");
  CHECK(back.preflight->findings.size() == 2);
  REQUIRE(back.preflight->loopback.has_value());
  REQUIRE(back.preflight->loopback->nics.size() == 2);
  CHECK(back.preflight->loopback->nics[0].path == "NUMA 1 → pci 0000:17:00.0 (x4, 7.88 GB/s)");
  CHECK(back.preflight->loopback->nics[1].error == "port 1 is DOWN");
  CHECK(back.allreduce->wrong == 3);
  // accept --congestion: a metric that was not measured has a null impact.
  CHECK(first["congestion"]["impacts"][1]["impact"].is_null());
  CHECK(std::isnan(back.congestion->impacts[1].impact));
  CHECK(back.congestion->loads[0].rounds == 17);
}

TEST_CASE("results sections: what an acceptance section leaves out stays out", "[results]") {
  results::Acceptance a;  // --skip-allreduce, no thresholds or preflight recorded
  const json j = results::to_json(a);
  CHECK_FALSE(j.contains("thresholds"));
  CHECK_FALSE(j.contains("preflight"));
  CHECK_FALSE(j.contains("allreduce"));
  CHECK(j["stragglers"].is_null());
  CHECK_FALSE(j.contains("congestion"));
  const results::Acceptance back = results::acceptance_from_json(j, "f.json");
  CHECK_FALSE(back.thresholds);
  CHECK_FALSE(back.preflight);
  CHECK_FALSE(back.allreduce);
  CHECK_FALSE(back.stragglers);
  CHECK(results::to_json(back) == j);
}

TEST_CASE("results sections: a filled soak section writes, reads and writes the same",
          "[results]") {
  const json first = json::parse(results::to_json(filled_soak()).dump());
  const results::Soak back = results::soak_from_json(first, "f.json");
  CHECK(results::to_json(back).dump(1) == first.dump(1));
  CHECK(back.params.tuning_source == "tuning.json");
  CHECK(back.params.thresholds.max_drift == 0.2);
  CHECK(back.windows.size() == 3);
  CHECK(back.summary->rss_growth_bytes == std::vector<std::int64_t>{0, -4096});

  results::Soak running = filled_soak();  // a soak that has not finished: summary null
  running.summary.reset();
  running.params.tuning_source.reset();
  const json j = results::to_json(running);
  CHECK(j["summary"].is_null());
  CHECK(j["params"]["tuning_source"].is_null());
  const results::Soak r = results::soak_from_json(j, "f.json");
  CHECK_FALSE(r.summary);
  CHECK_FALSE(r.params.tuning_source);
  CHECK(results::to_json(r) == j);
}

TEST_CASE("results sections: files written by ibscope accept and soak write back byte for byte",
          "[results]") {
  const std::string seeds = IBSCOPE_RESULTS_SEEDS;
  for (const char* name : {"accept-2-ranks-one-host.json", "soak-2-ranks.json"}) {
    INFO(name);
    const std::string text =
        ibscope::test::read_text_file(seeds + "/" + name);  // the whole file, loaded and written
    CHECK(results::to_text(results::parse(text, name)) == text);
  }
  SECTION("acceptance") {
    const json file =
        json::parse(ibscope::test::read_text_file(seeds + "/accept-2-ranks-one-host.json"));
    REQUIRE(file.contains("acceptance"));
    const json& a = file["acceptance"];
    CHECK(results::to_json(results::acceptance_from_json(a, "accept.json")).dump(1) == a.dump(1));
  }
  SECTION("soak") {
    const json file = json::parse(ibscope::test::read_text_file(seeds + "/soak-2-ranks.json"));
    REQUIRE(file.contains("soak"));
    const json& s = file["soak"];
    CHECK(results::to_json(results::soak_from_json(s, "soak.json")).dump(1) == s.dump(1));
  }
}

TEST_CASE("results sections: the readers name the source and the JSON path", "[results]") {
  const json acceptance = results::to_json(filled_acceptance());
  const auto acceptance_error = [](const json& j) {
    return message_of([&] { (void)results::acceptance_from_json(j, "f.json"); });
  };
  json a = acceptance;
  a["links"][1]["rank_b"] = 1ULL << 40;  // an integer the schema takes, an int cannot hold
  CHECK(acceptance_error(a) == "f.json: acceptance.links[1].rank_b: 1099511627776 is out of range");
  a = acceptance;
  a["links"][0].erase("pass");
  CHECK(acceptance_error(a) == "f.json: acceptance.links[0].pass: missing");
  a = acceptance;
  a["links"][0]["pass"] = 1;
  CHECK(acceptance_error(a) == "f.json: acceptance.links[0].pass: expected a boolean, got number");
  a = acceptance;
  a["preflight"]["findings"][1]["message"] = nullptr;
  CHECK(acceptance_error(a) ==
        "f.json: acceptance.preflight.findings[1].message: expected a string, got null");
  a = acceptance;
  a["stragglers"]["rows"][0]["arrival_us"][1][2] = "late";
  CHECK(acceptance_error(a) ==
        "f.json: acceptance.stragglers.rows[0].arrival_us[1][2]: expected a number, got string");
  a = acceptance;
  a["preflight"]["loopback"]["nics"][1]["write_gbyte_s"] = "fast";
  CHECK(acceptance_error(a) ==
        "f.json: acceptance.preflight.loopback.nics[1].write_gbyte_s: expected a number, got "
        "string");
  a = acceptance;
  a.erase("hosts");
  CHECK(acceptance_error(a) == "f.json: acceptance.hosts: missing");

  const json soak = results::to_json(filled_soak());
  const auto soak_error = [](const json& j) {
    return message_of([&] { (void)results::soak_from_json(j, "s.json"); });
  };
  json s = soak;
  s["params"]["duration_s"] = "1h";  // params stay an open object in the schema
  CHECK(soak_error(s) == "s.json: soak.params.duration_s: expected a number, got string");
  s = soak;
  s["params"]["sizes_bytes"][1] = -1;
  CHECK(soak_error(s) == "s.json: soak.params.sizes_bytes[1]: -1 is out of range");
  s = soak;
  s["windows"][2]["index"] = 1ULL << 40;
  CHECK(soak_error(s) == "s.json: soak.windows[2].index: 1099511627776 is out of range");
  s = soak;
  s["windows"][0]["cases"][0].erase("wrong");
  CHECK(soak_error(s) == "s.json: soak.windows[0].cases[0].wrong: missing");
  s = soak;
  s["summary"]["cases"][0]["p50_ratio"] = "x";
  CHECK(soak_error(s) == "s.json: soak.summary.cases[0].p50_ratio: expected a number, got string");
  s = soak;
  s.erase("summary");
  CHECK(soak_error(s) == "s.json: soak.summary: missing");
}
