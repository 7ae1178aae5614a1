// model/network (tiers, groups, the tiered cost) and model/link_fit (per-hop parameters from
// measured collective times), against hand-computed values.

#include <catch2/catch.hpp>
#include <random>

#include "ibscope/core/error.hpp"
#include "ibscope/model/link_fit.hpp"
#include "ibscope/model/network.hpp"

using namespace ibscope;
using namespace ibscope::model;
using Catch::Matchers::Contains;

namespace {

ClusterNetwork two_tier_cluster() {
  ClusterNetwork c;
  c.nodes = 4;
  c.gpus_per_node = 8;
  c.intra = {2e-6, 400, 1, "given"};  // 400 GB/s per rank
  c.inter = {10e-6, 50, 8, "given"};  // 8 NICs of 50 GB/s per node
  return c;
}

}  // namespace

TEST_CASE("network: a group inside one node uses the intra tier only", "[model]") {
  const auto net = make_network_model(two_tier_cluster());
  // Ring all-reduce, p = 8, n = 8e9 B: 2*7*2us + 2*7/8 * 8e9 B / 400e9 B/s = 28 us + 35 ms.
  CHECK(net->collective_s(Collective::kAllreduce, 8e9, {8, 8, 1}) ==
        Approx(28e-6 + 0.035).epsilon(1e-12));
  CHECK(net->collective_s(Collective::kAllreduce, 8e9, {1, 1, 1}) == 0);
}

TEST_CASE("network: groups across nodes share the node's NICs", "[model]") {
  const auto net = make_network_model(two_tier_cluster());
  // One rank per node, 8 such groups per node: each gets 8/8 = 1 NIC = 50 GB/s.
  // Ring p = 4, n = 4e9: 2*3*10us + 2*3/4 * 4e9 / 50e9 = 60 us + 0.12 s.
  CHECK(net->collective_s(Collective::kAllreduce, 4e9, {4, 1, 8}) ==
        Approx(60e-6 + 0.12).epsilon(1e-12));
  // Alone on the node, a one-rank-per-node group still drives only its own NIC: min(8, 1).
  CHECK(net->collective_s(Collective::kAllreduce, 4e9, {4, 1, 1}) ==
        Approx(60e-6 + 0.12).epsilon(1e-12));
  // 8 ranks per node on 4 nodes (p = 32): inter share min(8/1, 8) NICs = 400 GB/s, intra
  // 400 GB/s: beta = 1/400e9; alpha = max(2, 10) us. 2*31*10us + 2*31/32 * 32e9 / 400e9.
  CHECK(net->collective_s(Collective::kAllreduce, 32e9, {32, 8, 1}) ==
        Approx(620e-6 + 0.155).epsilon(1e-12));
  // Two concurrent groups of 4 ranks per node: min(8/2, 4) = 4 NICs = 200 GB/s is the slower
  // tier. p = 16: 2*15*10us + 2*15/16 * 16e9 / 200e9.
  CHECK(net->collective_s(Collective::kAllreduce, 16e9, {16, 4, 2}) ==
        Approx(300e-6 + 0.15).epsilon(1e-12));
}

TEST_CASE("network: reduce-scatter, all-gather and send/recv", "[model]") {
  auto c = two_tier_cluster();
  c.gamma_s_per_byte = 1e-12;
  const auto net = make_network_model(c);
  // Ring reduce-scatter p = 4 one rank per node, n = 4e9: 3*10us + 3/4*4e9/50e9 + 3/4*4e9*1e-12.
  CHECK(net->collective_s(Collective::kReduceScatter, 4e9, {4, 1, 8}) ==
        Approx(30e-6 + 0.06 + 0.003).epsilon(1e-12));
  CHECK(net->collective_s(Collective::kAllgather, 4e9, {4, 1, 8}) ==
        Approx(30e-6 + 0.06).epsilon(1e-12));
  // Send/recv: 10 us + 1e9 / 50e9 across nodes with 8 transfers per node (1 NIC each).
  CHECK(net->sendrecv_s(1e9, true, 8) == Approx(10e-6 + 0.02).epsilon(1e-12));
  // 16 transfers per node on 8 NICs: half a NIC each.
  CHECK(net->sendrecv_s(1e9, true, 16) == Approx(10e-6 + 0.04).epsilon(1e-12));
  CHECK(net->sendrecv_s(4e9, false, 1) == Approx(2e-6 + 0.01).epsilon(1e-12));
}

TEST_CASE("network: missing tiers, impossible groups and unknown algorithms are usage errors",
          "[model]") {
  auto c = two_tier_cluster();
  c.inter.bw_gbps = 0;
  CHECK_THROWS_WITH(make_network_model(c), Contains("inter-node tier has no bandwidth"));
  c = two_tier_cluster();
  model::algorithm_of(c, Collective::kAllreduce) = "nope";
  CHECK_THROWS_WITH(make_network_model(c), Contains("unknown algorithm 'nope'"));
  const auto net = make_network_model(two_tier_cluster());
  CHECK_THROWS_WITH(net->collective_s(Collective::kAllreduce, 1e6, {6, 4, 1}),
                    Contains("impossible group"));
  CHECK_THROWS_WITH(net->collective_s(Collective::kAllreduce, 1e6, {16, 16, 1}),
                    Contains("does not fit 8 ranks per node"));
  ClusterNetwork one_node;
  one_node.gpus_per_node = 1;
  one_node.inter = {1e-6, 10, 1, ""};
  const auto single = make_network_model(one_node);
  CHECK_THROWS_WITH(single->collective_s(Collective::kAllreduce, 1e6, {2, 1, 1}),
                    Contains("spans several nodes, but the cluster has 1"));
}

TEST_CASE("link fit: recovers alpha and beta from ring all-reduce at 2 and 3 ranks", "[model]") {
  const collectives::LinkCost truth{50e-6, 1 / 24e6, 0};
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.01);  // 1 % relative noise
  std::vector<CollectivePoint> pts;
  for (int p : {2, 3}) {
    for (double n = 128 * 1024; n <= 4 * 1024 * 1024; n *= 2) {
      const double t = collectives::ring_allreduce_cost_s(truth, n, p);
      pts.push_back({p, n, t * (1 + noise(rng))});
    }
  }
  pts[3].time_s *= 1.4;  // one disturbed point: the robust fit must not follow it
  const LinkFit fit = fit_link(Collective::kAllreduce, "ring", pts);
  CHECK(fit.link.beta_s_per_byte == Approx(truth.beta_s_per_byte).epsilon(0.02));
  CHECK(fit.link.alpha_s == Approx(truth.alpha_s).margin(40e-6));
  CHECK(fit.gamma_folded);  // ring: reduced bytes are always half the wire bytes
  CHECK(fit.rank_counts == std::vector<int>{2, 3});
  CHECK(fit.points == static_cast<int>(pts.size()));
  // The 4-rank prediction from the fit is within 2 % of the truth.
  const double n = 1 << 20;
  CHECK(collectives::ring_allreduce_cost_s(fit.link, n, 4) ==
        Approx(collectives::ring_allreduce_cost_s(truth, n, 4)).epsilon(0.02));
}

TEST_CASE("link fit: too few points and one size only are usage errors", "[model]") {
  const std::vector<CollectivePoint> one{{2, 1e6, 1e-3}};
  CHECK_THROWS_WITH(fit_link(Collective::kAllreduce, "ring", one), Contains("at least 2 sizes"));
  const std::vector<CollectivePoint> bad{{1, 1e6, 1e-3}, {2, 2e6, 2e-3}};
  CHECK_THROWS_WITH(fit_link(Collective::kAllreduce, "ring", bad), Contains(">= 2 ranks"));
  CHECK_THROWS_WITH(fit_link(Collective::kAllreduce, "nope", bad), Contains("unknown algorithm"));
}

TEST_CASE("link fit: results layout and rows", "[model]") {
  ibscope::results::Document doc;
  doc.job.hosts = {"a", "b", "c"};
  const auto row = [](const char* algorithm, std::optional<std::uint64_t> wrong, double p50_us,
                      std::uint64_t bytes) {
    ibscope::measure::CollectiveRow r;
    r.collective = ibscope::Collective::kAllreduce;
    r.algorithm = algorithm;
    r.wrong = wrong;
    r.iteration_us.p50 = p50_us;
    r.ranks = 3;
    r.size_bytes = bytes;
    return r;
  };
  doc.add_row(row("ring", 0, 100.0, 1024));
  doc.add_row(row("ring", 5, 90.0, 2048));
  doc.add_row(row("dbt", std::nullopt, 80.0, 1024));
  CHECK(measured_tier(doc) == MeasuredTier::kInter);
  const auto pts = collective_points(doc, Collective::kAllreduce, "ring");
  REQUIRE(pts.size() == 1);  // the row with #wrong > 0 is left out
  CHECK(pts[0].time_s == Approx(100e-6));
  CHECK(pts[0].bytes == 1024);
  doc.job.hosts = {"a", "a", "a"};
  CHECK(measured_tier(doc) == MeasuredTier::kIntra);
  doc.job.hosts = {"a", "a", "b"};
  CHECK(measured_tier(doc) == MeasuredTier::kMixed);
}

TEST_CASE("network: hier prices its shared-memory steps and its rail rings on their own tiers",
          "[model][hier]") {
  auto c = two_tier_cluster();
  c.gamma_s_per_byte = 1e-12;
  model::algorithm_of(c, Collective::kAllreduce) = "hier";
  const auto net = make_network_model(c);
  // 8 ranks per node on 4 nodes, n = 32e9 B. Intra: 3 * 2us + 7/8 n (1e-12 + 1/400e9).
  // Rails: 8 rings at once on 8 NICs, each 50 GB/s: ring p = 4 over n/8 = 4e9:
  // 2*3*10us + 2*3/4 * 4e9 / 50e9 + 3/4 * 4e9 * 1e-12.
  const double intra_s = 6e-6 + 7.0 / 8 * 32e9 * (1e-12 + 1 / 400e9);
  const double rails_s = 60e-6 + 0.12 + 0.75 * 4e9 * 1e-12;
  CHECK(net->collective_s(Collective::kAllreduce, 32e9, {32, 8, 1}) ==
        Approx(intra_s + rails_s).epsilon(1e-12));
  // Inside one node: the shared-memory steps only, 3 * 2us + 7/8 * 8e9 (1e-12 + 1/400e9).
  CHECK(net->collective_s(Collective::kAllreduce, 8e9, {8, 8, 1}) ==
        Approx(6e-6 + 7.0 / 8 * 8e9 * (1e-12 + 1 / 400e9)).epsilon(1e-12));
  // One rank per node: hier is the ring.
  auto ring = c;
  model::algorithm_of(ring, Collective::kAllreduce) = "ring";
  const auto ring_net = make_network_model(ring);
  CHECK(net->collective_s(Collective::kAllreduce, 4e9, {4, 1, 8}) ==
        Approx(ring_net->collective_s(Collective::kAllreduce, 4e9, {4, 1, 8})));
}
