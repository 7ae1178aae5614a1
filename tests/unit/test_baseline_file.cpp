// The baseline file (results/baseline.hpp): built from results documents, written atomically and
// never over a file, read back equal, and every kind of bad file refused with its path.

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/temp_dir.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"
#include "ibscope/results/writer.hpp"

using nlohmann::json;
namespace res = ibscope::results;

namespace {

// An accept run on 3 hosts with one mlx5 NDR port each; link bw per pair as given.
res::Document baseline_test_run(double ab, double ac, double bc, const std::string& speed = "NDR") {
  auto doc = res::Document::start("accept", {"ibscope", "accept"});
  std::vector<ibscope::topo::HostTopology> hosts;
  for (const char* h : {"h0", "h1", "h2"}) {
    ibscope::topo::HostTopology t;
    t.host = h;
    ibscope::topo::Nic nic;
    nic.name = "mlx5_0";
    ibscope::topo::NicPort port;
    port.state = "ACTIVE";
    port.link_layer = "InfiniBand";
    port.speed = speed;
    port.data_rate_gbit_s = speed == "NDR" ? 400 : 200;
    nic.ports.push_back(port);
    t.nics.push_back(nic);
    hosts.push_back(t);
  }
  doc.topology = hosts;
  doc.job.hosts = {"h0", "h1", "h2"};
  res::Acceptance a;
  a.transport = res::AcceptTransport::kVerbs;
  auto link = [](const char* x, const char* y, double gbps) {
    res::AcceptLink l;
    l.host_a = x;
    l.host_b = y;
    l.nic_a = "mlx5_0:1";
    l.nic_b = "mlx5_0:1";
    l.measured_gbps = gbps;
    l.latency_us = 2.0;
    l.pass = true;
    return l;
  };
  a.links = {link("h0", "h1", ab), link("h2", "h0", ac), link("h1", "h2", bc)};
  doc.acceptance = a;
  ibscope::measure::CollectiveRow row;
  row.collective = ibscope::Collective::kAllreduce;
  row.algorithm = "ring";
  row.size_bytes = 4 << 20;
  row.ranks = 3;
  row.busbw_gbps = ab / 2;
  row.time_us = 100;
  doc.add_row(row);
  return doc;
}

std::vector<std::pair<std::string, res::Document>> five_runs() {
  std::vector<std::pair<std::string, res::Document>> runs;
  const double ab[] = {47.7, 47.5, 47.9, 47.6, 40.0};  // one wild run
  for (int i = 0; i < 5; ++i) {
    runs.emplace_back("run" + std::to_string(i) + ".json", baseline_test_run(ab[i], 46, 45));
  }
  return runs;
}

std::string baseline_rejection(const std::string& text) {
  try {
    (void)res::parse_baseline(text, "b.json");
  } catch (const ibscope::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("baseline: built per link and row from five runs, keyed in one order", "[baseline]") {
  const res::Baseline b = res::build_baseline(five_runs(), {});
  CHECK(b.runs.size() == 5);
  CHECK_FALSE(b.mixed);
  CHECK(b.hardware.nic_model == "mlx5");
  CHECK(b.hardware.port_speed == "NDR");
  CHECK(b.hardware.link_rate_gbit == 400);
  CHECK(b.hardware.hosts == 3);
  CHECK(b.hardware.transport == "verbs");
  REQUIRE(b.links.size() == 3);
  // "h2 -> h0" is keyed h0, h2.
  CHECK(b.links[1].host_a == "h0");
  CHECK(b.links[1].host_b == "h2");
  CHECK(b.links[0].bw_gbps.n == 5);
  CHECK(b.links[0].bw_gbps.median == Approx(47.6));
  CHECK(b.links[0].bw_gbps.mad == Approx(0.1));
  CHECK(b.links[0].latency_us.median == Approx(2.0));
  REQUIRE(b.rows.size() == 1);
  CHECK(b.rows[0].collective == "allreduce");
  CHECK(b.rows[0].busbw_gbps.median == Approx(47.6 / 2));
}

TEST_CASE("baseline: too few runs, mixed hardware and empty runs are refused", "[baseline]") {
  auto runs = five_runs();
  CHECK_THROWS_WITH(res::build_baseline({runs[0], runs[1]}, {}),
                    Catch::Contains("at least 3 runs") && Catch::Contains("run0.json, run1.json"));
  runs.emplace_back("hdr.json", baseline_test_run(23, 23, 23, "HDR"));
  CHECK_THROWS_WITH(
      res::build_baseline(runs, {}),
      Catch::Contains("hdr.json ran on other hardware") && Catch::Contains("--allow-mixed"));
  const res::Baseline mixed = res::build_baseline(runs, {.min_runs = 3, .allow_mixed = true});
  CHECK(mixed.mixed);
  CHECK(mixed.runs.size() == 6);
  std::vector<std::pair<std::string, res::Document>> empty;
  for (int i = 0; i < 3; ++i) {
    empty.emplace_back("e.json", res::Document::start("accept", {"ibscope"}));
  }
  CHECK_THROWS_WITH(res::build_baseline(empty, {}), Catch::Contains("nothing to make a baseline"));
}

TEST_CASE("baseline: written atomically, read back equal, never overwritten", "[baseline]") {
  ibscope::test::TempDir dir;
  res::Baseline b = res::build_baseline(five_runs(), {});
  b.tool_version = "0.1.0";
  b.git_sha = "abc";
  b.created_utc = "2026-12-07T10:00:00Z";
  const auto path = dir.path() / "base.json";
  res::write_baseline(b, path);
  const res::Baseline back = res::load_baseline(path);
  CHECK(res::baseline_to_text(back) == res::baseline_to_text(b));
  CHECK(back.links[0].bw_gbps.median == b.links[0].bw_gbps.median);
  try {
    res::write_baseline(b, path);
    FAIL("overwrote an existing baseline");
  } catch (const ibscope::SystemError& e) {
    CHECK(e.errno_value() == EEXIST);
  }
  CHECK(res::load_baseline(path).runs.size() == 5);  // the first file is intact
}

TEST_CASE("baseline: corrupt and mismatched files are refused naming the field", "[baseline]") {
  res::Baseline b = res::build_baseline(five_runs(), {});
  const json good = json::parse(res::baseline_to_text(b));
  CHECK(baseline_rejection(good.dump()) == "accepted");
  CHECK_THAT(baseline_rejection("{\"baseline_version\": 1,"), Catch::Contains("not valid JSON"));
  // A results file given as a baseline is told so.
  const std::string results_text = res::to_text(baseline_test_run(1, 1, 1));
  CHECK_THAT(baseline_rejection(results_text), Catch::Contains("results file, not a baseline"));
  json v2 = good;
  v2["baseline_version"] = 2;
  CHECK_THAT(baseline_rejection(v2.dump()), Catch::Contains("version 2 is not supported"));
  json typo = good;
  typo["links"][0]["bw_gpbs"] = 1;
  CHECK_THAT(baseline_rejection(typo.dump()),
             Catch::Contains("links[0].bw_gpbs: unknown field (not in baseline schema version 1"));
  json missing = good;
  missing["links"][0].erase("bw_gbps");
  CHECK_THAT(baseline_rejection(missing.dump()), Catch::Contains("links[0].bw_gbps: missing"));
  json order = good;
  order["links"][0]["bw_gbps"]["median"] = 1e9;
  CHECK_THAT(baseline_rejection(order.dump()),
             Catch::Contains("links[0].bw_gbps: expected min <= p25 <= median"));
  json kind = good;
  kind["kind"] = "reference";
  CHECK_THAT(baseline_rejection(kind.dump()), Catch::Contains("a reference holds references only"));
  json negative = good;
  negative["links"][0]["bw_gbps"]["spread"] = -1;
  CHECK_THAT(baseline_rejection(negative.dump()), Catch::Contains("links[0].bw_gbps.spread"));
}

TEST_CASE("baseline: the shipped references parse and match by NIC, speed, rate and layer",
          "[baseline]") {
  const auto refs = res::shipped_references();
  REQUIRE(refs.size() >= 2);
  for (const auto& r : refs) {
    INFO(r.name);
    CHECK(r.kind == res::BaselineKind::kReference);
    REQUIRE_FALSE(r.references.empty());
    for (const auto& f : r.references) {
      CHECK(f.source_url.rfind("https://", 0) == 0);
      CHECK_FALSE(f.source_says.empty());
    }
  }
  const res::HardwareSignature ndr = res::signature_of(baseline_test_run(1, 1, 1));
  const res::Baseline* m = res::match_reference(refs, ndr);
  REQUIRE(m != nullptr);
  CHECK_THAT(m->name, Catch::Contains("NDR 400"));
  CHECK(m->references[0].value_gbps == Approx(46.875));
  const res::Baseline* h =
      res::match_reference(refs, res::signature_of(baseline_test_run(1, 1, 1, "HDR")));
  REQUIRE(h != nullptr);
  CHECK(h->references[0].value_gbps == Approx(23.125));
  res::HardwareSignature tcp;  // no RDMA NIC: no reference
  CHECK(res::match_reference(refs, tcp) == nullptr);
}
