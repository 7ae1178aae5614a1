// Fits of results documents (model/results_fits.hpp) and what `ibscope fit` writes
// (model/fit_export.hpp): curves grouped and fitted from synthetic rows with known alpha and
// bandwidth, links from p2p rows, transport labels, skipped curves, and the NCCL tuner CSV.

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ibscope/model/fit_export.hpp"
#include "ibscope/model/results_fits.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;
using namespace ibscope::model;

namespace {

namespace results = ibscope::results;

ibscope::measure::Stats stats_us(double p50_us) {
  ibscope::measure::Stats s;
  s.p50 = s.mean = p50_us;
  return s;
}

ibscope::measure::CollectiveRow collective_row(const std::string& coll, const std::string& algo,
                                               double bytes, double us, bool in_place = false,
                                               int wrong = 0) {
  ibscope::measure::CollectiveRow r;
  r.collective = *ibscope::collective_named(coll);
  r.algorithm = algo;
  r.type = ibscope::DataType::kFloat32;
  if (ibscope::reduces(r.collective)) r.op = ibscope::ReduceOp::kSum;
  r.in_place = in_place;
  r.size_bytes = static_cast<std::uint64_t>(bytes);
  r.ranks = 2;
  r.iteration_us = stats_us(us);
  r.time_us = r.iteration_us.mean;
  r.wrong = wrong;
  return r;
}

ibscope::measure::P2pRow p2p_row(const std::string& test, double bytes, int window, double us) {
  ibscope::measure::P2pRow r;
  r.test = test;
  r.rank_a = 0;
  r.rank_b = 1;
  r.host_a = "a";
  r.host_b = "b";
  r.size_bytes = static_cast<std::uint64_t>(bytes);
  r.window = window;
  r.time_us = stats_us(us);
  r.transports = "tcp/eth0[am] | tag_send 0..<egr/short>..8256..<rndv>..(inf)";
  return r;
}

results::Document with_transports(std::map<std::string, std::string> transports) {
  results::Document doc;
  doc.environment.transports = std::move(transports);
  return doc;
}

// Two hosts over TCP: all-reduce ring t = 5 us + n / 2 GB/s, 8 B .. 1 MiB; a rd curve with
// two sizes only; p2p latency 3 us + n / 1 GB/s and bw windows of 64 at 1.25 GB/s.
results::Document synthetic_results() {
  results::Document doc = with_transports({{"0->1", "tcp/eth0[am,keepalive] | tag_send 0..(inf)"},
                                           {"1->0", "tcp/eth0[am,keepalive] | tag_send 0..(inf)"}});
  doc.job.hosts = {"a", "b"};
  doc.command.subcommand = "run";
  for (double n = 8; n <= 1 << 20; n *= 2) {
    doc.add_row(collective_row("allreduce", "ring", n, 5 + n / 2e3));
    doc.add_row(p2p_row("latency", n, 1, 3 + n / 1e3));
    doc.add_row(p2p_row("bw", n, 64, 20 + 64 * n / 1.25e3));
  }
  doc.add_row(collective_row("allreduce", "ring", 64, 999, true, 3));  // wrong: dropped
  doc.add_row(collective_row("allreduce", "rd", 8, 4));
  doc.add_row(collective_row("allreduce", "rd", 16, 4));
  return doc;
}

}  // namespace

TEST_CASE("transport labels from UCX lanes", "[model]") {
  CHECK(transport_label("sysv/memory[am,am_bw#0,keepalive] posix/memory | tag_send 0..<egr/"
                        "short>..93..<egr/bcopy>..8256..<rndv>..(inf)") == "sysv+posix");
  CHECK(transport_label("tcp/eth0[am] tcp/eth1 | tag_send") == "tcp");
  CHECK(transport_label("rc_mlx5/mlx5_0:1[am] ud_mlx5/mlx5_0:1") == "rc_mlx5+ud_mlx5");
  CHECK(transport_label("") == "unknown");
  CHECK(file_transport_label(results::Document{}) == "unknown");
  const auto mixed =
      with_transports({{"0->1", "sysv/memory posix/memory | x"}, {"0->2", "tcp/eth0 | x"}});
  CHECK(file_transport_label(mixed) == "sysv+posix,tcp");
}

TEST_CASE("fit_results: curves, links and notes from a synthetic document", "[model]") {
  FitReport report;
  fit_results(synthetic_results(), "x.json", {}, report);
  REQUIRE(report.curves.size() == 1);
  const auto& c = report.curves[0];
  CHECK(c.key.id() == "allreduce/ring/tcp/p2/h2/out/float/sum");
  CHECK(c.fit.segments.size() == 1);
  CHECK(c.fit.segments[0].alpha_s == Approx(5e-6).epsilon(1e-6));
  CHECK(c.fit.segments[0].bw_gbps == Approx(2).epsilon(1e-6));
  CHECK(c.fit.r2 == Approx(1).epsilon(1e-9));
  // Ring all-reduce on 2 ranks: A = 2 messages, B = n wire bytes per link.
  REQUIRE(c.fit.segments[0].link);
  CHECK(c.fit.segments[0].link->alpha_s == Approx(2.5e-6).epsilon(1e-6));
  CHECK(c.fit.segments[0].link->bw_eff_gbps == Approx(2).epsilon(1e-6));
  CHECK(c.fit.segments[0].link->gamma_folded);
  CHECK_THAT(c.link_note, Contains("folded"));
  // The in-place curve had one row, and it was wrong; rd has 2 sizes: both skipped.
  REQUIRE(report.notes.size() == 2);
  CHECK_THAT(report.notes[0], Contains("allreduce/rd/tcp/p2/h2/out/float/sum: skipped, 2"));
  CHECK_THAT(report.notes[1], Contains("allreduce/ring/tcp/p2/h2/in/float/sum: skipped, 0") &&
                                  Contains("1 row(s) left out"));

  REQUIRE(report.links.size() == 2);
  const auto& bw = report.links[0];
  CHECK(bw.id() == "p2p/bw/0-1");
  CHECK(bw.transport == "tcp");
  CHECK(bw.bw_gbps == Approx(1.25).epsilon(1e-6));
  CHECK(bw.alpha_us == Approx(20).epsilon(1e-6));
  const auto& lat = report.links[1];
  CHECK(lat.id() == "p2p/latency/0-1");
  CHECK(lat.alpha_us == Approx(3).epsilon(1e-6));
  CHECK(lat.bw_gbps == Approx(1).epsilon(1e-6));

  FitReport only_rd;
  FitFilter filter;
  filter.algorithm = "rd";
  fit_results(synthetic_results(), "x.json", filter, only_rd);
  CHECK(only_rd.curves.empty());
  CHECK(only_rd.links.size() == 2);
}

TEST_CASE("fit_results: an all-to-all curve, its rows of size 0 left out", "[model]") {
  // Scattered all-to-all on 2 ranks: t = 4 us + n / 3 GB/s; a size below one element per rank
  // moves nothing (size 0, a time > 0) and is no point of the curve.
  results::Document doc = synthetic_results();
  doc.add_row(collective_row("alltoall", "scattered", 0, 0.07));
  for (double n = 1024; n <= 1 << 20; n *= 4) {
    doc.add_row(collective_row("alltoall", "scattered", n, 4 + n / 3e3));
  }
  FitReport report;
  FitFilter filter;
  filter.collective = "alltoall";
  fit_results(doc, "x.json", filter, report);
  REQUIRE(report.curves.size() == 1);
  const auto& c = report.curves[0];
  CHECK(c.key.id() == "alltoall/scattered/tcp/p2/h2/out/float/none");
  CHECK(c.fit.segments[0].alpha_s == Approx(4e-6).epsilon(1e-6));
  CHECK(c.fit.segments[0].bw_gbps == Approx(3).epsilon(1e-6));
  CHECK(c.dropped_rows == 0);
  // Its one message of n/2 per peer: per link n/2 bytes.
  REQUIRE(c.fit.segments[0].link);
  CHECK(c.fit.segments[0].link->bw_eff_gbps == Approx(1.5).epsilon(1e-6));
  CHECK_FALSE(c.fit.segments[0].link->gamma_folded);
}

TEST_CASE("fit document, series CSV and NCCL tuner CSV", "[model]") {
  FitReport report;
  fit_results(synthetic_results(), "x.json", {}, report);
  const json doc = json::parse(fit_document_text(report));
  CHECK(doc.at("kind") == "ibscope-fit");
  CHECK(doc.at("schema_version") == 1);
  CHECK(doc.at("sources") == json::array({"x.json"}));
  CHECK(doc.at("curves")[0].at("fit").at("series").size() == 18);
  CHECK(doc.at("links")[0].at("bw_gbps").get<double>() == Approx(1.25).epsilon(1e-6));

  const std::string series = series_csv(report);
  CHECK(series.rfind("curve_id,source,size_bytes,measured_us,fitted_us,residual_pct\n", 0) == 0);
  CHECK_THAT(series, Contains("allreduce/ring/tcp/p2/h2/out/float/sum,x.json,1024,5.512,5.512,"));

  const NcclCsv nccl = nccl_tuner_csv(report);
  // 1 MiB at 5 us + n / 2 GB/s = 529.288 us, algbw 1048576 / 529.288 us = 1.98111 GB/s.
  CHECK_THAT(nccl.text,
             Contains("\nallreduce,1048576,ring,simple,-1,2,2,-1,-1,529.288,1.98111,529.288\n"));
  CHECK(nccl.notes.empty());

  CHECK(nccl_collective("reduce_scatter") == "reducescatter");
  CHECK(nccl_algorithm("dbt") == "tree");
  CHECK(nccl_algorithm("tree") == "tree");
  CHECK_FALSE(nccl_algorithm("rhd"));
  CurveResult rd = report.curves[0];
  rd.key.algorithm = "rhd";
  report.curves.push_back(rd);
  const NcclCsv with_rhd = nccl_tuner_csv(report);
  REQUIRE(with_rhd.notes.size() == 1);
  CHECK_THAT(with_rhd.notes[0], Contains("NCCL has no algorithm 'rhd'"));
}

TEST_CASE("verbs probe rows: latency from time_us, bandwidth from bw_gbps", "[model]") {
  results::Document doc;
  doc.job.hosts = {"a", "b"};
  for (double n = 2; n <= 1 << 22; n *= 2) {
    ibscope::measure::ProbeRow lat;
    lat.test = "write_lat";
    lat.rank_a = 0;
    lat.rank_b = 1;
    lat.host_a = "a";
    lat.host_b = "b";
    lat.device_a = "mlx5_0:1";
    lat.device_b = "mlx5_1:1";
    lat.size_bytes = static_cast<std::uint64_t>(n);
    lat.time_us = stats_us(2 + n / 3e3);
    // Streaming: 0.5 us per message + n / 12 GB/s; the row reports the average rate.
    ibscope::measure::ProbeRow bw = lat;
    bw.test = "write_bw";
    bw.time_us = stats_us(0);
    bw.bw_gbps = n / (0.5e-6 + n / 12e9) / 1e9;
    doc.add_row(lat);
    doc.add_row(bw);
  }
  FitReport report;
  fit_results(doc, "v.json", {}, report);
  CHECK(report.curves.empty());
  REQUIRE(report.links.size() == 2);
  const auto& bw = report.links[0];
  CHECK(bw.id() == "verbs/write_bw/0-1");
  CHECK(bw.transport == "mlx5_0:1->mlx5_1:1");
  CHECK(bw.alpha_us == Approx(0.5).epsilon(1e-6));
  CHECK(bw.bw_gbps == Approx(12).epsilon(1e-6));
  const auto& lat = report.links[1];
  CHECK(lat.id() == "verbs/write_lat/0-1");
  CHECK(lat.alpha_us == Approx(2).epsilon(1e-6));
  CHECK(lat.bw_gbps == Approx(3).epsilon(1e-6));
}
