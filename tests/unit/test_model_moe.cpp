// Expert parallelism in the training-step model (model/moe.hpp, docs/model.md, "Expert
// parallelism"): the all-to-all bytes and counts, the MoE parameters and FLOPs of the Mixtral
// preset by hand, the EP term of a step on a test-double network, the tiered network's
// all-to-all pricing from fitted tiers, and "not costed" when no all-to-all fit is present.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "ibscope/core/error.hpp"
#include "ibscope/model/moe.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/transformer.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"

using namespace ibscope;
using namespace ibscope::model;

namespace {

// Every call is alpha + bytes / bw of the tier the group stays in (intra) or crosses (inter);
// all-to-all is unpriced when `alltoall_fit` is false, as a network without all-to-all fits.
class MoeFakeNetwork : public NetworkModel {
 public:
  explicit MoeFakeNetwork(bool alltoall_fit) : alltoall_fit_(alltoall_fit) {}
  double collective_s(Collective c, double bytes, const Group& g) const override {
    if (c == Collective::kAlltoall) alltoall_groups.push_back(g);
    if (g.ranks == 1) return 0;
    const bool intra = g.ranks == g.ranks_per_node;
    return intra ? 1e-6 + bytes / 100e9 : 1e-5 + bytes / 10e9;
  }
  double sendrecv_s(double bytes, bool across_nodes, int) const override {
    return across_nodes ? 1e-5 + bytes / 10e9 : 1e-6 + bytes / 100e9;
  }
  std::optional<std::string> unpriced(Collective c, const Group&) const override {
    if (c == Collective::kAlltoall && !alltoall_fit_) return std::string("no all-to-all fit");
    return std::nullopt;
  }
  mutable std::vector<Group> alltoall_groups;

 private:
  bool alltoall_fit_;
};

// 4 layers, h 1024, s 1024; t=2, p=2, d=2 on 4-GPU nodes; B=8, b=1 -> m=4; measured compute
// 0.1 s per micro-batch; MoE every 2nd layer (2 of 4), 4 experts, top-2, EP 2.
Workload moe_toy() {
  Workload w;
  w.name = "moe-toy";
  w.arch = Architecture::kLlama;
  w.layers = 4;
  w.hidden = 1024;
  w.heads = 8;
  w.kv_heads = 8;
  w.ffn_hidden = 4096;
  w.seq_len = 1024;
  w.vocab = 1024;
  w.global_batch = 8;
  w.micro_batch = 1;
  w.tp = 2;
  w.pp = 2;
  w.dp = 2;
  w.gpus_per_node = 4;
  w.measured_compute_s_per_microbatch = 0.1;
  w.bucket_bytes = 20e6;
  w.overlap = Overlap::kNone;
  Moe e;
  e.experts = 4;
  e.top_k = 2;
  e.expert_ffn_hidden = 2048;
  e.every = 2;
  e.ep = 2;
  w.moe = e;
  validate(w, "moe-toy");
  return w;
}

std::string moe_usage_error(const nlohmann::json& doc) {
  try {
    workload_from_text(doc.dump(), "w.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("moe: Mixtral 8x7B parameters, FLOPs and all-to-all bytes by hand", "[training][moe]") {
  const Workload w = preset("mixtral-8x7b");
  REQUIRE(w.moe);
  CHECK(moe_layer_count(w) == 32);
  // Per layer: attention 2 h^2 + 2 h (h 8/32) = 33,554,432 + 8,388,608 = 41,943,040; 8
  // SwiGLU experts 8 x 3 x 4096 x 14336 = 1,409,286,144; router 4096 x 8 = 32,768; 2 RMSNorms
  // 8,192: 1,451,270,144. x 32 = 46,440,644,608; embeddings 2 V h = 262,144,000; final norm
  // 4,096: 46,702,792,704 (the paper's "47B").
  CHECK(parameters(w) == 46'702'792'704.0);
  // Routed experts 32 x 8 x 176,160,768 = 45,097,156,608, spread over EP 8 (t = p = 1).
  CHECK(routed_expert_parameters(w) == 45'097'156'608.0);
  CHECK(parameters_per_gpu(w) == 46'702'792'704.0 - 45'097'156'608.0 + 5'637'144'576.0);
  // A token multiplies attention, 2 experts and the router: 41,943,040 + 352,321,536 + 32,768
  // = 394,297,344 per layer (12.9e9 active parameters with embeddings: the paper's "13B").
  const double s = 32768;
  const double forward = 32 * (2 * s * 394'297'344.0 + 4 * s * s * 4096) + 2 * s * 4096 * 32000;
  CHECK(training_flops(w, 1).forward == Approx(forward).epsilon(1e-12));
  // One all-to-all: b s x top_k x h x 2 B = 32768 x 2 x 4096 x 2 = 536,870,912 B; dispatch and
  // combine forward and backward (selective recompute adds none).
  CHECK(ep_message_bytes(w) == 536'870'912.0);
  CHECK(ep_alltoalls_per_layer(w) == 4);
  // t = 1, EP 8 on 8-GPU nodes: one group per node, inside it.
  const Group g = ep_group(w);
  CHECK((g.ranks == 8 && g.ranks_per_node == 8 && g.concurrent_per_node == 1));
}

TEST_CASE("moe: layer counts, capacity factor, sequence parallelism, placement",
          "[training][moe]") {
  Workload w = moe_toy();
  CHECK(moe_layer_count(w) == 2);  // layers 0 and 2 of 4
  w.moe->first_dense = 1;
  CHECK(moe_layer_count(w) == 2);  // layers 1 and 3
  w.moe->first_dense = 3;
  w.moe->every = 1;
  CHECK(moe_layer_count(w) == 1);
  // b s k h x 2 B = 1024 x 2 x 1024 x 2 = 4,194,304; x 1.25 with a capacity factor; / t with
  // sequence parallelism; full recompute adds the recomputed forward's two.
  w = moe_toy();
  CHECK(ep_message_bytes(w) == 4'194'304.0);
  w.moe->capacity_factor = 1.25;
  CHECK(ep_message_bytes(w) == 5'242'880.0);
  w.sequence_parallel = true;
  CHECK(ep_message_bytes(w) == 2'621'440.0);
  w.recompute = Recompute::kFull;
  CHECK(ep_alltoalls_per_layer(w) == 6);
  // t = 2 on 4-GPU nodes: 2 data-parallel ranks per node, EP 2 inside it, 2 groups per node;
  // EP 4 (dp 4) spans 2 nodes.
  w = moe_toy();
  CHECK((ep_group(w).ranks_per_node == 2 && ep_group(w).concurrent_per_node == 2));
  w.dp = 4;
  w.global_batch = 16;
  w.moe->ep = 4;
  validate(w, "w");
  const Group g = ep_group(w);
  CHECK((g.ranks == 4 && g.ranks_per_node == 2 && g.concurrent_per_node == 2));
  // Dense: no EP at all.
  w.moe.reset();
  CHECK((ep_message_bytes(w) == 0 && ep_alltoalls_per_layer(w) == 0 && ep_group(w).ranks == 1));
}

TEST_CASE("moe: the EP term of a step, by hand", "[training][moe]") {
  const Workload w = moe_toy();
  const MoeFakeNetwork net(true);
  const StepBreakdown s = model_step(w, net);
  // One call: 1 us + 4,194,304 B / 100 GB/s = 42.94304 us (inside one node); per step on one
  // GPU m x (MoE layers / p) x 4 = 4 x 1 x 4 = 16 calls.
  CHECK(s.ep_bytes == 4'194'304.0);
  CHECK(s.ep_calls == 16);
  CHECK(s.ep_s == Approx(16 * 42.94304e-6).epsilon(1e-12));
  CHECK_FALSE(s.ep_unpriced);
  REQUIRE(!net.alltoall_groups.empty());
  CHECK(net.alltoall_groups.front().ranks == 2);
  // The bubble covers the EP time too; the step adds it.
  CHECK(s.bubble_s == Approx(0.25 * (s.compute_s + s.tp_s + s.pp_s + s.ep_s)));
  CHECK(s.step_s == Approx(s.compute_s + s.tp_s + s.pp_s + s.ep_s + s.bubble_s + s.dp_exposed_s));
  CHECK(s.network_s == Approx(s.step_s - s.compute_s * 1.25));

  // Without an all-to-all fit: said so, 0, and not in the step.
  const MoeFakeNetwork unfit(false);
  const StepBreakdown u = model_step(w, unfit);
  REQUIRE(u.ep_unpriced);
  CHECK(*u.ep_unpriced == "no all-to-all fit");
  CHECK(u.ep_s == 0);
  CHECK(u.ep_bytes == s.ep_bytes);
  CHECK(u.step_s == Approx(s.step_s - 1.25 * s.ep_s));
}

TEST_CASE("moe: the tiered network prices all-to-all from all-to-all tiers only",
          "[training][moe]") {
  ClusterNetwork c;
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.intra = {1e-6, 100, 1, "given"};
  c.inter = {1e-5, 10, 2, "given"};
  algorithm_of(c, Collective::kAlltoall) = "pairwise";
  const Group inside{4, 4, 1};
  const Group across{4, 2, 2};
  {
    const auto net = make_network_model(c);
    const auto why = net->unpriced(Collective::kAlltoall, inside);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Matchers::Contains("no all-to-all fit for the intra-node tier"));
    CHECK_THAT(*net->unpriced(Collective::kAlltoall, across),
               Catch::Matchers::Contains("intra-node and inter-node"));
    CHECK_THROWS_AS(net->collective_s(Collective::kAlltoall, 1e6, inside), UsageError);
    CHECK_FALSE(net->unpriced(Collective::kAllreduce, inside));
  }
  c.alltoall_intra = Tier{2e-6, 50, 1, "fitted"};
  c.alltoall_inter = Tier{2e-5, 5, 2, "fitted"};
  const auto net = make_network_model(c);
  CHECK_FALSE(net->unpriced(Collective::kAlltoall, across));
  // Pairwise (p-1)(alpha + n/p beta), inside a node: 3 (2 us + 250,000 B / 50 GB/s) = 21 us.
  CHECK(net->collective_s(Collective::kAlltoall, 1e6, inside) == Approx(21e-6));
  // Across nodes: the worse tier; every rank of the group sends across at once, so each gets
  // 5 GB/s x min(2 links / (2 groups x 2 ranks), 1) = 2.5 GB/s: 3 (20 us + 250,000 / 2.5e9).
  CHECK(net->collective_s(Collective::kAlltoall, 1e6, across) == Approx(3 * (20e-6 + 100e-6)));

  // What-ifs move the all-to-all tier with the tier of the same links.
  Workload w = moe_toy();
  w.dp = 4;
  w.global_batch = 16;
  w.moe->ep = 4;
  validate(w, "w");
  const NetworkFactory factory = [](const ClusterNetwork& x) { return make_network_model(x); };
  const WhatIfResult r = evaluate(parse_what_ifs("inter-bw=2").front(), w, c, factory);
  CHECK(r.changed.ep_s < r.baseline.ep_s);
  CHECK(r.baseline.ep_s > 0);
}

TEST_CASE("moe: workload file section, round trip and errors", "[training][moe]") {
  const Workload w = preset("mixtral-8x7b");
  const Workload back = workload_from_text(workload_json_text(w), "back");
  REQUIRE(back.moe);
  CHECK(back.moe->experts == 8);
  CHECK(back.moe->top_k == 2);
  CHECK(back.moe->ep == 8);
  CHECK_FALSE(back.moe->capacity_factor);
  CHECK(workload_json_text(back) == workload_json_text(w));

  auto doc = nlohmann::json::parse(workload_json_text(w));
  doc["moe"]["capacity_factor"] = 1.5;
  CHECK(*workload_from_text(doc.dump(), "w").moe->capacity_factor == 1.5);

  auto bad = doc;
  bad["moe"]["ep"] = 3;
  CHECK_THAT(moe_usage_error(bad), Catch::Matchers::Contains("w.json: moe.ep:"));
  bad = doc;
  bad["moe"]["top_k"] = 9;
  CHECK_THAT(moe_usage_error(bad), Catch::Matchers::Contains("moe.top_k: top_k 9 is more"));
  bad = doc;
  bad["moe"]["expert"] = 8;
  CHECK_THAT(moe_usage_error(bad), Catch::Matchers::Contains("moe.expert: unknown field"));
  bad = doc;
  bad["moe"].erase("top_k");
  CHECK_THAT(moe_usage_error(bad), Catch::Matchers::Contains("moe.top_k: missing"));
  bad = doc;
  bad["moe"]["first_dense"] = 32;
  CHECK_THAT(moe_usage_error(bad), Catch::Matchers::Contains("leave no MoE layer"));
  bad = doc;
  bad["moe"]["ep"] = 128;  // does not divide dp 64... nor the 8 experts
  CHECK_THAT(moe_usage_error(bad), Catch::Matchers::Contains("moe.ep:"));
}
