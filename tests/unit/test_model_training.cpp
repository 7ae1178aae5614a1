// The training-step model (ibscope model): every term against values computed by hand here,
// on a test-double network whose call times are plain alpha + bytes/bw, so the arithmetic in
// the comments is all there is.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/model/calibration.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/transformer.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"

using namespace ibscope;
using namespace ibscope::model;
using Catch::Matchers::Contains;

namespace {

// Inside a node when the group fits one (or the send stays inside): intra tier, else inter.
// all-reduce: 2 alpha + 2 n / bw; reduce-scatter, all-gather: alpha + n / bw;
// send/recv: alpha + n / bw. Concurrency is recorded, not modelled.
class FakeNetwork : public NetworkModel {
 public:
  explicit FakeNetwork(ClusterNetwork c) : c_(std::move(c)) {}
  double collective_s(Collective c, double bytes, const Group& g) const override {
    groups.push_back(g);
    if (g.ranks == 1) return 0;
    const Tier& t = g.ranks == g.ranks_per_node ? c_.intra : c_.inter;
    const double k = c == Collective::kAllreduce ? 2 : 1;
    return k * (t.latency_s + bytes / (t.bw_gbps * 1e9));
  }
  double sendrecv_s(double bytes, bool across_nodes, int concurrent_per_node) const override {
    sends.push_back({across_nodes, concurrent_per_node});
    const Tier& t = across_nodes ? c_.inter : c_.intra;
    return t.latency_s + bytes / (t.bw_gbps * 1e9);
  }
  mutable std::vector<Group> groups;
  mutable std::vector<std::pair<bool, int>> sends;

 private:
  ClusterNetwork c_;
};

ClusterNetwork fake_cluster(int gpus_per_node, int nodes) {
  ClusterNetwork c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.intra.latency_s = 1e-6;  // 1 us, 100 GB/s
  c.intra.bw_gbps = 100;
  c.inter.latency_s = 1e-5;  // 10 us, 10 GB/s
  c.inter.bw_gbps = 10;
  return c;
}

const NetworkFactory kFakeFactory = [](const ClusterNetwork& c) -> std::unique_ptr<NetworkModel> {
  return std::make_unique<FakeNetwork>(c);
};

// A small GPT: 4 layers, h 1024, s 1024, V 1024; t=2, p=2, d=2 on 4-GPU nodes (2 nodes);
// B=8, b=1 -> m = 8 / (1 x 2) = 4; measured compute 0.1 s per micro-batch.
Workload toy() {
  Workload w;
  w.name = "toy";
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
  validate(w, "toy");
  return w;
}

std::string usage_error(const nlohmann::json& doc) {
  try {
    workload_from_text(doc.dump(), "w.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("GPT-3 175B parameters and FLOPs match Narayanan et al.'s formulas", "[training]") {
  const Workload w = preset("gpt3-175b");
  // P = 12 l h^2 + 13 l h + (V + s) h (+ 2h final LayerNorm, not in the paper's formula):
  // 12*96*12288^2 = 173,946,175,488; 13*96*12288 = 15,335,424; (51200+2048)*12288 =
  // 654,311,424; sum 174,615,822,336 (the paper's "174.6B"); + 24,576 = 174,615,846,912.
  CHECK(parameters(w) == 174'615'846'912.0);
  CHECK(layer_parameters(w) == 12.0 * 12288 * 12288 + 13.0 * 12288);
  // Model FLOPs per step, B = 1536: 72 B l s h^2 (1 + s/(6h) + V/(12 h l)) = 3.38620e18.
  const Flops f = training_flops(w, 1536);
  CHECK(f.model == Approx(3.3861967463873244e18).epsilon(1e-12));
  // Full recompute: 96 B l s h^2 (1 + s/(6h) + V/(16 l h)) = 4.51097e18.
  CHECK(f.hardware == Approx(4.5109707533231063e18).epsilon(1e-12));
  CHECK(f.forward == Approx(f.model / 3));
  // Selective recompute adds one forward of the attention core: 4 B s^2 h per layer.
  Workload sel = w;
  sel.recompute = Recompute::kSelective;
  CHECK(training_flops(sel, 1536).hardware ==
        Approx(f.model + 96 * 4.0 * 1536 * 2048.0 * 2048.0 * 12288).epsilon(1e-12));
  Workload none = w;
  none.recompute = Recompute::kNone;
  CHECK(training_flops(none, 1536).hardware == f.model);
}

TEST_CASE("Llama 3 70B parameters with GQA, SwiGLU and untied embeddings", "[training]") {
  const Workload w = preset("llama3-70b");
  // Per layer: Q and output 2 h^2 = 134,217,728; K and V 2 h (h 8/64) = 2*8192*1024 =
  // 16,777,216; SwiGLU 3 h f = 3*8192*28672 = 704,643,072; 2 RMSNorms 16,384:
  // 855,654,400. x 80 = 68,452,352,000; embeddings 2 V h = 2,101,346,304; final norm 8,192.
  CHECK(layer_parameters(w) == 855'654'400.0);
  CHECK(parameters(w) == 70'553'706'496.0);
  // Forward FLOPs per sequence: 2 s (matrix weights) per layer + 4 s^2 h per layer + 2 s h V.
  const double matrices = 855'654'400.0 - 16'384;
  const double s = 8192;
  const double forward = 80 * (2 * s * matrices + 4 * s * s * 8192) + 2 * s * 8192 * 128256;
  CHECK(training_flops(w, 1).forward == Approx(forward).epsilon(1e-12));
}

TEST_CASE("bubble and per-micro-batch communication volumes", "[training]") {
  const Workload w = preset("gpt3-175b");  // t=8, p=12, d=16, B=1536, b=1, full recompute
  // m = 1536 / (1 x 16) = 96; bubble (p-1)/(m v) = 11/96.
  CHECK(w.microbatches() == 96);
  CHECK(bubble_fraction(w) == Approx(11.0 / 96));
  // TP message b s h x 2 B = 2048*12288*2 = 50,331,648 B; 4 + 2 (recomputed forward).
  CHECK(tp_message_bytes(w) == 50'331'648.0);
  CHECK(tp_collectives_per_layer(w) == 6);
  // PP: / t with scatter/gather = 6,291,456 B; 2v = 2 sends.
  CHECK(pp_message_bytes(w) == 6'291'456.0);
  CHECK(pp_sends_per_microbatch(w) == 2);
  // DP: P / (t p) x 4 B = 174,615,846,912 / 96 x 4.
  CHECK(dp_gradient_bytes(w) == Approx(174'615'846'912.0 / 96 * 4));

  Workload v = w;
  v.vp = 2;  // interleaving: bubble / 2, pipeline sends x 2
  CHECK(bubble_fraction(v) == Approx(11.0 / 192));
  CHECK(pp_sends_per_microbatch(v) == 4);
  Workload nosg = w;
  nosg.pp_scatter_gather = false;
  CHECK(pp_message_bytes(nosg) == 50'331'648.0);
  Workload sp = nosg;
  sp.sequence_parallel = true;  // activations already split over the sequence
  CHECK(pp_message_bytes(sp) == 6'291'456.0);
  Workload single = w;
  single.tp = 1;
  single.pp = 1;
  CHECK(tp_collectives_per_layer(single) == 0);
  CHECK(pp_sends_per_microbatch(single) == 0);
}

TEST_CASE("rank placement follows Megatron's order (tp, then dp, then pp)", "[training]") {
  // GPT-3 preset: t = 8 fills a node; DP neighbours 8 ranks apart: one per node, 8 groups
  // per node; pipeline boundaries cross nodes with all 8 GPUs sending.
  const Placement g = place_ranks(preset("gpt3-175b"));
  CHECK((g.tp.ranks == 8 && g.tp.ranks_per_node == 8 && g.tp.concurrent_per_node == 1));
  CHECK((g.dp.ranks == 16 && g.dp.ranks_per_node == 1 && g.dp.concurrent_per_node == 8));
  CHECK(g.pp_across_nodes);
  CHECK(g.pp_concurrent_per_node == 8);
  // Llama 2 7B preset: t = 1, d = 16 on 8-GPU nodes: 8 DP ranks per node, one group.
  const Placement l = place_ranks(preset("llama2-7b"));
  CHECK((l.tp.ranks == 1 && l.tp.concurrent_per_node == 8));
  CHECK((l.dp.ranks == 16 && l.dp.ranks_per_node == 8 && l.dp.concurrent_per_node == 1));
  // t=1, d=2, p=2 on 4-GPU nodes: the whole pipeline sits in one node.
  Workload w = toy();
  w.tp = 1;
  w.heads = 8;
  const Placement t = place_ranks(w);
  CHECK((t.dp.ranks == 2 && t.dp.ranks_per_node == 2 && t.dp.concurrent_per_node == 2));
  CHECK_FALSE(t.pp_across_nodes);
  // t=16 over two 8-GPU nodes.
  Workload big = preset("gpt3-175b");
  big.tp = 16;
  big.dp = 8;
  const Placement b = place_ranks(big);
  CHECK((b.tp.ranks == 16 && b.tp.ranks_per_node == 8 && b.tp.concurrent_per_node == 1));
  CHECK((b.dp.ranks_per_node == 1 && b.dp.concurrent_per_node == 8));
}

TEST_CASE("overlap rules: exposed_after and exposed_before", "[training]") {
  // Small calls: only the last (after) / the first (before) is exposed.
  const std::vector<double> small = {1, 1, 1};
  CHECK(exposed_after(small, 30) == 1);
  CHECK(exposed_before(small, 30) == 1);
  // Calls 3 s each, window 6 s: ready at 2, 4, 6; ends 5, 8, 11 -> 5 s after the window
  // (n c - (n-1) W/n = 9 - 4). Before: needed at 0, 2, 4; ends 3, 6, 9 -> delay 5.
  const std::vector<double> big = {3, 3, 3};
  CHECK(exposed_after(big, 6) == Approx(5));
  CHECK(exposed_before(big, 6) == Approx(5));
  // No window: everything is exposed.
  CHECK(exposed_after(big, 0) == Approx(9));
  CHECK(exposed_before(big, 0) == Approx(9));
  CHECK(exposed_after({}, 6) == 0);
}

TEST_CASE("step breakdown of a small workload, by hand", "[training]") {
  const Workload w = toy();
  const FakeNetwork net(fake_cluster(4, 2));
  const StepBreakdown s = model_step(w, net);
  // compute 4 x 0.1 = 0.4 s; bubble fraction (2-1)/(4x1) = 0.25.
  CHECK(s.microbatches == 4);
  CHECK(s.compute_s == Approx(0.4));
  CHECK(s.bubble_fraction == 0.25);
  // TP all-reduce of 1x1024x1024x2 = 2,097,152 B inside a node: 2 (1e-6 + 2097152/100e9) =
  // 43.94304e-6 s; x 4 per layer x 2 layers per GPU x 4 micro-batches = 1406.17728e-6 s.
  CHECK(s.tp_s == Approx(1406.17728e-6));
  // PP: 2,097,152 / 2 = 1,048,576 B across nodes: 1e-5 + 1048576/10e9 = 114.8576e-6 s;
  // x 2 sends x 4 micro-batches = 918.8608e-6 s, with 4 GPUs per node sending.
  CHECK(s.pp_s == Approx(918.8608e-6));
  REQUIRE(!net.sends.empty());
  CHECK(net.sends.front() == std::pair<bool, int>{true, 4});
  // Bubble 0.25 x (0.4 + 1406.17728e-6 + 918.8608e-6) = 0.10058125952 s.
  CHECK(s.bubble_s == Approx(0.10058125952));
  // Parameters: 4 (12 h^2 + 13 h) + (V + s) h + 2h = 50,384,896 + 2,097,152 + 2,048 =
  // 52,484,096; per GPU / 4 x 4 B = 52,484,096 B -> buckets 20e6, 20e6, 12,484,096.
  // DP group: 2 ranks in one node: 2 (1e-6 + n/100e9) = 402e-6, 402e-6, 251.68192e-6.
  CHECK(s.dp_bytes_per_gpu == 52'484'096.0);
  CHECK(s.dp_buckets == 3);
  CHECK(s.dp_total_s == Approx(1055.68192e-6));
  CHECK(s.dp_exposed_s == Approx(1055.68192e-6));  // overlap none
  // Step 0.4 + 1406.17728e-6 + 918.8608e-6 + 0.10058125952 + 1055.68192e-6 = 0.50396197952;
  // network = step - 0.4 x 1.25 = 0.00396197952 s.
  CHECK(s.step_s == Approx(0.50396197952));
  CHECK(s.network_s == Approx(0.00396197952));
  CHECK(s.network_share == Approx(0.00396197952 / 0.50396197952));
  // Tokens: 8 x 1024 / (step x 8 GPUs).
  CHECK(s.tokens_per_s_per_gpu == Approx(1024 / 0.50396197952));
  CHECK_FALSE(s.mfu.has_value());  // no peak given

  // Overlap with backward: the window is the last micro-batch's backward, 0.1 x 2/3 s (its
  // FLOP share without recompute) + its TP half 1406.17728e-6 / 4 / 2 = 175.77216e-6 s (intra)
  // + its PP half 114.8576e-6 s (inter) = 0.066957296426667 s. The DP ring's hops are
  // intra-node, shared with TP for 175.77216e-6 / 0.066957296426667 = 0.0026251382505 of the
  // window: while it overlaps the backward pass DP runs at 1 - that of its speed. The buckets
  // are small next to the window, so only the last shows, and it starts when the backward
  // ends, alone on the links: 251.68192e-6 s.
  Workload o = w;
  o.overlap = Overlap::kGradReduce;
  const StepBreakdown so = model_step(o, net);
  CHECK(so.dp_total_s == Approx(1055.68192e-6));
  CHECK(so.dp_exposed_s == Approx(251.68192e-6));
  CHECK(so.step_s == Approx(0.50396197952 - 804e-6));
}

TEST_CASE("sequence parallelism, distributed optimizer and MFU", "[training]") {
  Workload w = toy();
  w.sequence_parallel = true;
  w.distributed_optimizer = true;
  w.overlap = Overlap::kNone;
  w.measured_compute_s_per_microbatch.reset();
  w.peak_tflops = 100;
  w.achieved_fraction = 0.5;
  const FakeNetwork net(fake_cluster(4, 2));
  const StepBreakdown s = model_step(w, net);
  // TP: reduce-scatter + all-gather of 2,097,152 B: 2 (1e-6 + 20.97152e-6) = 43.94304e-6,
  // the same as the all-reduce of the fake network.
  CHECK(s.tp_s == Approx(1406.17728e-6));
  // DP: RS of the gradient buckets (1e-6 + n/100e9: 201e-6, 201e-6, 125.84096e-6) and AG of
  // the parameters at 2 B (n/2: 101e-6, 101e-6, 63.42048e-6): 527.84096e-6 + 265.42048e-6
  // = 793.26144e-6 s.
  CHECK(s.dp_total_s == Approx(793.26144e-6));
  // Compute from FLOPs: one micro-batch forward = 4 (2 x 1024 x 12 h^2 + 4 x 1024^2 x 1024)
  // + 2 x 1024 x 1024 x 1024 = 4 (25,769,803,776 + 4,294,967,296) + 2,147,483,648 =
  // 122,406,567,936; x 3 = 367,219,703,808 FLOPs; / (t p = 4) / (100e12 x 0.5) s.
  CHECK(s.compute_s == Approx(4 * 367'219'703'808.0 / 4 / 50e12));
  REQUIRE(s.mfu.has_value());
  // MFU: model FLOPs of the step (8 sequences) / (step x 8 GPUs x 100e12).
  CHECK(*s.mfu == Approx(8 * 367'219'703'808.0 / (s.step_s * 8 * 100e12)));
  CHECK(*s.mfu < 0.5);  // never above the achieved fraction

  // Parameter gather overlapped with the next forward. Per micro-batch: compute
  // 367,219,703,808 / 4 / 50e12 = 1.83609851904e-3 s, forward 1/3 of it = 0.61203283968e-3;
  // TP 175.77216e-6 (intra) and PP 114.8576e-6 (inter) each way. Windows: forward 0.90266259968e-3,
  // backward 1.51469543936e-3 s; TP's intra share of them 0.19472631309 and 0.11604455617.
  // Each call is small next to its window: the last reduce (ready as the backward ends) and
  // the first gather (the forward waits for it) show, both alone on the links: 125.84096e-6
  // + 101e-6. The second gather then runs beside the forward's TP traffic, at 1 - 0.19472631309
  // of its speed: 101e-6 / 0.80527368691 = 125.42e-6 s, ending at 226.42e-6 s, before it is
  // due at 101e-6 + 0.90266259968e-3 / 3 = 401.89e-6 s.
  w.overlap = Overlap::kGradReduceAndParamGather;
  const StepBreakdown o = model_step(w, net);
  CHECK(o.dp_exposed_s == Approx(125.84096e-6 + 101e-6));
  w.overlap = Overlap::kGradReduce;  // gathers stay exposed
  CHECK(model_step(w, net).dp_exposed_s == Approx(125.84096e-6 + 265.42048e-6));
}

TEST_CASE("interleaved overlap: each chunk's reduction starts at its own last backward",
          "[training]") {
  // The toy with v = 2 on 2-GPU nodes: TP (t 2) fills a node, DP (2 ranks) and PP cross
  // nodes, inter tier 10 us and 0.1 GB/s; one bucket per chunk (26,242,048 B < 30 MB).
  Workload w = toy();
  w.vp = 2;
  w.gpus_per_node = 2;
  w.bucket_bytes = 30e6;
  w.overlap = Overlap::kGradReduce;
  validate(w, "toy");
  ClusterNetwork c = fake_cluster(2, 4);
  c.inter.bw_gbps = 0.1;
  const FakeNetwork net(c);
  const StepBreakdown s = model_step(w, net);
  // TP as before, 1406.17728e-6 s. PP: 2v = 4 sends of 1e-5 + 1,048,576 / 0.1e9 =
  // 0.01049576 s per micro-batch: 4 x 4 x 0.01049576 = 0.16793216 s. Bubble (2-1)/(4 x 2) =
  // 0.125 of (0.4 + 0.00140617728 + 0.16793216) = 0.07116729216 s.
  CHECK(s.pp_s == Approx(0.16793216));
  CHECK(s.bubble_s == Approx(0.07116729216));
  // Per chunk 52,484,096 / 2 = 26,242,048 B: all-reduce 2 (1e-5 + 0.26242048) = 0.52486096 s.
  CHECK(s.dp_buckets == 2);
  CHECK(s.dp_total_s == Approx(2 * 0.52486096));
  // One backward unit (a micro-batch through one chunk): 0.1 x 2/3 / 2 compute + TP
  // 1406.17728e-6 / 4 / 2 / 2 (intra) + PP 0.16793216 / 4 / 2 / 2 = 0.01049576 (inter) =
  // 0.0439169794133 s. DP shares the NICs with PP for 0.01049576 / 0.0439169794133 =
  // 0.238990935629 of it: while the backward goes on, DP progresses at 0.761009064371 of its
  // speed. Chunk 1's last backward is followed by p = 2 units of chunk 0, each with 1/4 of
  // the bubble (the first stage's cool-down has min(m v, 2 (p-1) + (v-1) p) = 4 units):
  // 2 x 0.0439169794133 + 2 x 0.07116729216 / 4 = 0.123417604907 s. Its reduction starts at
  // -0.123417604907 and does 0.123417604907 x 0.761009064371 = 0.093921916037 s of its work
  // before the backward ends, the other 0.430939043963 s alone after it; chunk 0's (ready
  // at 0) follows: exposed 0.430939043963 + 0.52486096 = 0.955800003963 s.
  CHECK(s.dp_exposed_s == Approx(0.955800003963));
  // The one-micro-batch rule would expose both calls after the last backward (the 0.088 s
  // backward hides almost nothing): at least 2 x 0.52486096 - 0.088 s.
  CHECK(s.dp_exposed_s < 2 * 0.52486096 - 0.088);
}

TEST_CASE("what-if: faster network never slows a step and sensitivity is negative", "[training]") {
  for (const std::string& name : preset_names()) {
    INFO(name);
    const Workload w = preset(name);
    const ClusterNetwork c = fake_cluster(w.gpus_per_node, 1);  // nodes set from the workload
    for (const char* spec : {"inter-bw=2", "inter-lat=0.5", "intra-bw=2", "intra-lat=0.5"}) {
      INFO(spec);
      const WhatIfResult r = evaluate(parse_what_ifs(spec).at(0), w, c, kFakeFactory);
      CHECK(r.changed.step_s <= r.baseline.step_s);
      CHECK(r.change_pct <= 0);
    }
    const WhatIfResult slower = evaluate(parse_what_ifs("inter-bw=0.5").at(0), w, c, kFakeFactory);
    CHECK(slower.change_pct >= 0);
    const Sensitivity s = inter_bw_sensitivity(w, c, kFakeFactory);
    CHECK(s.inter_bw_gbps == 10);
    CHECK(s.ds_dbw_s_per_gbps <= 0);
    CHECK(s.elasticity <= 0);
    CHECK(s.elasticity >= -1);  // the step is at most all network
  }
}

TEST_CASE("what-if: node count and layout changes", "[training]") {
  const Workload w = preset("gpt3-175b");  // 1536 GPUs = 192 nodes
  const ClusterNetwork c = fake_cluster(8, 192);
  // 96 nodes: dp = 768 / 96 = 8, m = 1536 / 8 = 192: less bubble, more steps per GPU.
  const WhatIfResult half = evaluate(parse_what_ifs("nodes=96").at(0), w, c, kFakeFactory);
  CHECK(half.workload.dp == 8);
  CHECK(half.changed.microbatches == 192);
  CHECK(half.changed.step_s > half.baseline.step_s);
  const WhatIfResult lay = evaluate(parse_what_ifs("layout=tp8pp8dp16").at(0), w, c, kFakeFactory);
  CHECK((lay.workload.tp == 8 && lay.workload.pp == 8 && lay.workload.dp == 16));
  CHECK(lay.workload.nodes() == 128);
  // Invalid changes are usage errors naming the item.
  CHECK_THROWS_WITH(evaluate(parse_what_ifs("nodes=7").at(0), w, c, kFakeFactory),
                    Contains("nodes=7"));
  CHECK_THROWS_WITH(evaluate(parse_what_ifs("layout=tp8pp7dp16").at(0), w, c, kFakeFactory),
                    Contains("model.layers"));
  CHECK_THROWS_WITH(parse_what_ifs("inter-bw=0"), Contains("factor > 0"));
  CHECK_THROWS_WITH(parse_what_ifs("speed=2"), Contains("unknown key 'speed'"));
  CHECK_THROWS_WITH(parse_what_ifs("layout=t8p8"), Contains("tpNppNdpN"));
  const auto list = parse_what_ifs("inter-bw=2,inter-lat=0.5,nodes=64,layout=tp8pp8dp16vp2");
  REQUIRE(list.size() == 4);
  CHECK(list[3].vp == 2);
  // A cluster with another node size is refused.
  CHECK_THROWS_WITH(cluster_for(fake_cluster(4, 1), w), Contains("4 GPUs per node"));
}

TEST_CASE("workload files: round trip and errors with the JSON path", "[training]") {
  for (const std::string& name : preset_names()) {
    const Workload w = preset(name);
    const Workload back = workload_from_text(workload_json_text(w), name);
    CHECK(workload_json_text(back) == workload_json_text(w));
  }
  const auto good = nlohmann::json::parse(workload_json_text(preset("gpt3-175b")));

  nlohmann::json missing = good;
  missing["model"].erase("hidden");
  CHECK_THAT(usage_error(missing), Contains("w.json: model.hidden: missing"));

  nlohmann::json wrong = good;
  wrong["parallel"]["tp"] = "8";
  CHECK_THAT(usage_error(wrong), Contains("w.json: parallel.tp: expected an integer, got string"));

  nlohmann::json batch = good;
  batch["batch"]["global"] = 1000;  // not divisible by b x d = 16
  CHECK_THAT(usage_error(batch), Contains("w.json: batch.global:"));

  nlohmann::json layers = good;
  layers["parallel"]["pp"] = 7;
  CHECK_THAT(usage_error(layers), Contains("w.json: model.layers: 96 layers are not divisible"));

  nlohmann::json nodes = good;
  nodes["parallel"]["dp"] = 3;  // 8 x 12 x 3 = 288 GPUs (1536 % 3 == 0: the batch is fine)
  nodes["parallel"]["gpus_per_node"] = 64;  // 288 is not a multiple of 64
  CHECK_THAT(usage_error(nodes), Contains("parallel.gpus_per_node"));

  nlohmann::json tp = good;
  tp["parallel"]["tp"] = 5;
  CHECK_THAT(usage_error(tp), Contains("parallel.tp"));

  nlohmann::json huge = good;  // sizes whose product would overflow an int
  huge["parallel"]["tp"] = 1'000'000;
  huge["parallel"]["dp"] = 1'000'000;
  CHECK_THAT(usage_error(huge), Contains("w.json: parallel: tp x pp x dp = "));

  nlohmann::json micro = good;
  micro["batch"]["micro"] = 1000;  // 1000 x 16 > 1536
  CHECK_THAT(usage_error(micro), Contains("w.json: batch.micro: micro batch 1000 x dp 16"));

  nlohmann::json typo = good;
  typo["model"]["hiden"] = 1;
  CHECK_THAT(usage_error(typo), Contains("w.json: model.hiden: unknown field"));

  nlohmann::json overlap = good;
  overlap["data_parallel"]["overlap"] = "always";
  CHECK_THAT(usage_error(overlap), Contains("data_parallel.overlap: unknown value 'always'"));

  nlohmann::json compute = good;
  compute["compute"].erase("peak_tflops");
  CHECK_THAT(usage_error(compute), Contains("w.json: compute: give peak_tflops"));

  CHECK_THROWS_WITH(preset("gpt4"), Contains("unknown preset 'gpt4'"));
  CHECK_THROWS_WITH(load_workload("/nonexistent/w.json"), Contains("cannot open"));
}

TEST_CASE("what-if on the tiered network model: more bandwidth never slows a step", "[training]") {
  // The real make_network_model (ring algorithms, links shared by concurrent groups): an
  // NDR-class fabric with 8 NICs per node and NVLink-class nodes.
  const NetworkFactory real = [](const ClusterNetwork& c) { return make_network_model(c); };
  for (const std::string& name : preset_names()) {
    INFO(name);
    const Workload w = preset(name);
    ClusterNetwork c;
    c.gpus_per_node = w.gpus_per_node;
    c.intra.latency_s = 2e-6;
    c.intra.bw_gbps = 300;
    c.inter.latency_s = 5e-6;
    c.inter.bw_gbps = 24;
    c.inter.links_per_node = 8;
    const StepBreakdown s = model_step(w, *real(cluster_for(c, w)));
    CHECK(s.network_share > 0);
    CHECK(s.network_share < 1);
    CHECK(s.step_s == Approx(s.compute_s * (1 + s.bubble_fraction) + s.network_s));
    for (const char* spec : {"inter-bw=2", "inter-bw=10", "intra-bw=2", "inter-lat=0.1"}) {
      INFO(spec);
      CHECK(evaluate(parse_what_ifs(spec).at(0), w, c, real).change_pct <= 0);
    }
    const Sensitivity sens = inter_bw_sensitivity(w, c, real);
    CHECK(sens.ds_dbw_s_per_gbps < 0);  // every preset spans nodes
    CHECK(sens.elasticity > -1);
  }
}

// Found by tests/fuzz: nlohmann's out_of_range for 1e400 escaped load_workload (regressions/).
TEST_CASE("workload file: a number too large for a double is a UsageError", "[training]") {
  CHECK_THROWS_WITH(workload_from_text(R"({"model": {"layers": 1e400}})", "w.json"),
                    Contains("w.json: not valid JSON"));
}

TEST_CASE("calibration: a measured micro-batch or step gives the achieved fraction",
          "[training][calibration]") {
  Workload w = toy();
  w.measured_compute_s_per_microbatch.reset();
  w.peak_tflops = 100;
  w.achieved_fraction = 0.9;
  const FakeNetwork net(fake_cluster(4, 2));
  // One micro-batch: 367,219,703,808 hardware FLOPs / (t p = 4) = 91,804,925,952 per GPU; in
  // 2 ms that is 91,804,925,952 / (100e12 x 0.002) = 0.45902462976 of peak.
  const CalibrationResult mb = calibrate(w, net, parse_calibration("microbatch=0.002"));
  CHECK(mb.achieved_fraction == Approx(0.45902462976));
  CHECK(mb.compute_s_per_microbatch == 0.002);
  CHECK(*mb.workload.achieved_fraction == Approx(0.45902462976));
  CHECK_FALSE(mb.workload.measured_compute_s_per_microbatch.has_value());
  // A step of 0.5 s, overlap none: step = 1.25 (4 c + tp + pp) + dp with tp 1406.17728e-6,
  // pp 918.8608e-6, dp 1055.68192e-6 s (the hand-computed breakdown above), so
  // c = ((0.5 - 1055.68192e-6) / 1.25 - 1406.17728e-6 - 918.8608e-6) / 4 = 0.099207604096 s
  // and the fraction 91,804,925,952 / (100e12 x 0.099207604096) = 0.0092538195.
  const CalibrationResult st = calibrate(w, net, parse_calibration("step=0.5"));
  CHECK(st.compute_s_per_microbatch == Approx(0.099207604096).epsilon(1e-8));
  CHECK(st.achieved_fraction == Approx(91'804'925'952.0 / (100e12 * 0.099207604096)));
  CHECK(st.modelled_step_s == Approx(0.5).epsilon(1e-8));
  // Round trip with overlap on: the model's own step at 0.5 of peak calibrates back to 0.5.
  w.overlap = Overlap::kGradReduce;
  Workload half = w;
  half.achieved_fraction = 0.5;
  const double step = model_step(half, net).step_s;
  const CalibrationResult back =
      calibrate(w, net, parse_calibration(fmt::format("step={:.17g}", step)));
  CHECK(back.achieved_fraction == Approx(0.5).epsilon(1e-7));
}

TEST_CASE("calibration: bad values and impossible figures are usage errors",
          "[training][calibration]") {
  CHECK_THROWS_WITH(parse_calibration("step"), Contains("expected step=SECONDS"));
  CHECK_THROWS_WITH(parse_calibration("flops=3"), Contains("expected step=SECONDS"));
  CHECK_THROWS_WITH(parse_calibration("step=-1"), Contains("not a time in seconds > 0"));
  CHECK_THROWS_WITH(parse_calibration("step=1s"), Contains("not a time in seconds > 0"));
  CHECK_THROWS_WITH(parse_calibration("microbatch=inf"), Contains("not a time in seconds > 0"));
  CHECK(parse_calibration("microbatch=0.25").kind == Calibration::Kind::kMicrobatch);
  Workload w = toy();
  const FakeNetwork net(fake_cluster(4, 2));
  // No peak: nothing to carry the fraction with.
  CHECK_THROWS_WITH(calibrate(w, net, parse_calibration("step=1")),
                    Contains("no compute.peak_tflops"));
  w.measured_compute_s_per_microbatch.reset();
  w.peak_tflops = 100;
  w.achieved_fraction = 0.5;
  // Faster than the step at 100 % of peak.
  CHECK_THROWS_WITH(calibrate(w, net, parse_calibration("step=0.001")),
                    Contains("at 100 % of peak"));
  // 91.8 GFLOPs in 0.1 ms would be 9.2 x peak.
  CHECK_THROWS_WITH(calibrate(w, net, parse_calibration("microbatch=0.0001")),
                    Contains("must be in (0, 1]"));
}
