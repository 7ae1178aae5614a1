// Scaling curves (model/scaling.hpp): node lists, the per-scale batch file, the rows and the
// CSV, on a network that costs nothing so that the step is compute x (1 + bubble) by hand.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/model/calibration.hpp"
#include "ibscope/model/scaling.hpp"
#include "output/report_sections.hpp"

using namespace ibscope;
using namespace ibscope::model;
using Catch::Matchers::Contains;

namespace {

class FreeNetwork : public NetworkModel {
 public:
  double collective_s(Collective, double, const Group&) const override { return 0; }
  double sendrecv_s(double, bool, int) const override { return 0; }
};

const NetworkFactory kFree = [](const ClusterNetwork&) -> std::unique_ptr<NetworkModel> {
  return std::make_unique<FreeNetwork>();
};

// t 2 x p 2 on 4-GPU nodes, B 8, b 1, 0.1 s of compute per micro-batch.
Workload small() {
  Workload w;
  w.name = "small";
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
  w.dp = 1;
  w.gpus_per_node = 4;
  w.measured_compute_s_per_microbatch = 0.1;
  w.bucket_bytes = 20e6;
  validate(w, "small");
  return w;
}

ClusterNetwork cluster() {
  ClusterNetwork c;
  c.gpus_per_node = 4;
  c.intra.bw_gbps = 100;
  c.inter.bw_gbps = 10;
  return c;
}

}  // namespace

TEST_CASE("scale: node lists and ranges", "[scaling]") {
  CHECK(parse_scale_nodes("nodes=4,1,2,2") == std::vector<int>{1, 2, 4});
  CHECK(parse_scale_nodes("nodes=16..128") == std::vector<int>{16, 32, 64, 128});
  CHECK(parse_scale_nodes("nodes=3..20") == std::vector<int>{3, 6, 12, 20});
  CHECK(parse_scale_nodes("nodes=5..5") == std::vector<int>{5});
  CHECK_THROWS_WITH(parse_scale_nodes("gpus=8"), Contains("expected nodes=A,B,C"));
  CHECK_THROWS_WITH(parse_scale_nodes("nodes=4,,8"), Contains("node count '' is not"));
  CHECK_THROWS_WITH(parse_scale_nodes("nodes=0,8"), Contains("'0' is not a whole number"));
  CHECK_THROWS_WITH(parse_scale_nodes("nodes=8..4"), Contains("runs backwards"));
  CHECK_THROWS_WITH(parse_scale_nodes("nodes=x..4"), Contains("'x' is not"));
}

TEST_CASE("scale: the per-scale batch file", "[scaling]") {
  const auto b = batch_per_scale_from_text("# ours\nnodes,global_batch\n1,8\n 4 , 16\n", "b.csv");
  CHECK(b.size() == 2);
  CHECK(b.at(1) == 8);
  CHECK(b.at(4) == 16);
  CHECK_THROWS_WITH(batch_per_scale_from_text("n,b\n1,8\n", "b.csv"),
                    Contains("b.csv:1: expected the header"));
  CHECK_THROWS_WITH(batch_per_scale_from_text("nodes,global_batch\n1;8\n", "b.csv"),
                    Contains("b.csv:2: expected NODES,GLOBAL_BATCH"));
  CHECK_THROWS_WITH(batch_per_scale_from_text("nodes,global_batch\n1,8\n1,16\n", "b.csv"),
                    Contains("b.csv:3: 1 nodes given twice"));
  CHECK_THROWS_WITH(batch_per_scale_from_text("nodes,global_batch\n1,-8\n", "b.csv"),
                    Contains("global_batch '-8' is not"));
  CHECK_THROWS_WITH(batch_per_scale_from_text("", "b.csv"), Contains("b.csv: empty"));
}

TEST_CASE("scale: fixed batch, by hand on a free network", "[scaling]") {
  const std::vector<ScaleRow> rows = scale_curve(small(), cluster(), {1, 2, 4}, {}, kFree);
  REQUIRE(rows.size() == 3);
  // 1 node: d 1, m 8, step 0.8 x (1 + 1/8) = 0.9 s; 8 x 1024 tokens / (0.9 s x 4 GPUs).
  CHECK(rows[0].workload.dp == 1);
  CHECK(rows[0].step.step_s == Approx(0.9));
  CHECK(rows[0].step.tokens_per_s_per_gpu == Approx(8192 / 3.6));
  CHECK(rows[0].efficiency == Approx(1));
  // 2 nodes: d 2, m 4, 0.4 x 1.25 = 0.5 s on 8 GPUs: 2048 tokens/s/GPU, 0.9 of linear.
  CHECK(rows[1].workload.dp == 2);
  CHECK(rows[1].step.step_s == Approx(0.5));
  CHECK(rows[1].efficiency == Approx(0.9));
  // 4 nodes: d 4, m 2, 0.2 x 1.5 = 0.3 s on 16 GPUs: 1706.67 tokens/s/GPU, 0.75 of linear.
  CHECK(rows[2].step.step_s == Approx(0.3));
  CHECK(rows[2].efficiency == Approx(0.75));
  // The CSV: header with units, one line per scale.
  const std::string csv = scale_csv_text(rows);
  CHECK(csv.rfind("nodes,gpus,tp,pp,dp,vp,global_batch,microbatches,step_s,network_s,network_pct,"
                  "tokens_per_s_per_gpu,efficiency_pct,mfu_pct\n",
                  0) == 0);
  CHECK_THAT(csv, Contains("\n1,4,2,2,1,1,8,8,0.9,0,0,2275.56,100,\n"));
  CHECK_THAT(csv, Contains("\n4,16,2,2,4,1,8,2,0.3,0,0,1706.67,75,\n"));
}

TEST_CASE("scale: batch per scale and scales that do not fit", "[scaling]") {
  // 4 nodes with B 16: m 4, 0.5 s on 16 GPUs: 2048 tokens/s/GPU, 0.9 of the 1-node figure.
  const std::vector<ScaleRow> rows =
      scale_curve(small(), cluster(), {1, 4}, {{1, 8}, {4, 16}}, kFree);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].workload.global_batch == 16);
  CHECK(rows[1].step.step_s == Approx(0.5));
  CHECK(rows[1].efficiency == Approx(0.9));
  CHECK_THROWS_WITH(scale_curve(small(), cluster(), {1, 2}, {{1, 8}}, kFree),
                    Contains("--scale: 2 nodes: the batch file has no line for 2 nodes"));
  // 3 nodes: d 3 does not divide B 8.
  CHECK_THROWS_WITH(scale_curve(small(), cluster(), {3}, {}, kFree), Contains("--scale: 3 nodes"));
  // tp x pp = 8 does not fill whole 4-GPU nodes at 1 node.
  Workload wide = small();
  wide.tp = 4;
  wide.pp = 2;
  wide.gpus_per_node = 4;
  wide.global_batch = 8;
  CHECK_THROWS_WITH(scale_curve(wide, cluster(), {1}, {}, kFree),
                    Contains("4 GPUs are not a multiple of tp x pp = 8"));
}

TEST_CASE("scale: the report draws the curve and its table", "[scaling]") {
  ibscope::output::TrainingReport t;
  t.workload = "small";
  t.layout = "tp 2 x pp 2";
  t.breakdown = model_step(small(), FreeNetwork());
  t.scaling = scale_curve(small(), cluster(), {1, 2, 4}, {}, kFree);
  t.calibration = "Calibrated on a step of 0.9 s";
  const auto s = ibscope::output::report::training_section(t);
  CHECK_THAT(s.html, Contains("<h3>Scaling</h3>"));
  CHECK_THAT(s.html, Contains("data-chart=\"scaling\""));
  CHECK_THAT(s.html, Contains("efficiency vs linear scaling (%)"));
  CHECK_THAT(s.html, Contains("<td>75.0</td>"));  // 4 nodes
  CHECK_THAT(s.html, Contains("Calibrated on a step of 0.9 s"));
  t.scaling.clear();
  CHECK_THAT(ibscope::output::report::training_section(t).html, !Contains("<h3>Scaling</h3>"));
}

TEST_CASE("scale: the published runs of docs/model.md stay within 15 % after calibration",
          "[scaling][validation]") {
  // The tiers and figures of docs/model.md, "Validation against published training runs".
  ClusterNetwork c;
  c.gpus_per_node = 8;
  c.inter = {5e-6, 24, 8, "assumed"};
  c.intra = {2e-6, 300, 1, "assumed"};
  const NetworkFactory real = [](const ClusterNetwork& n) { return make_network_model(n); };
  const auto predict = [&](Workload w, double step_s, const std::vector<int>& nodes,
                           const std::map<int, int>& batch) {
    const auto net = real(cluster_for(c, w));
    w = calibrate(w, *net, parse_calibration(fmt::format("step={}", step_s))).workload;
    return scale_curve(w, c, nodes, batch, real);
  };
  // Narayanan et al. SC21, Table 2: published steps = FLOPs / (GPUs x teraFLOP/s per GPU).
  const auto g530 = predict(preset("gpt-530b"), 206.22, {70, 140, 280}, {});
  CHECK(g530[1].step.step_s == Approx(105.58).epsilon(0.15));
  CHECK(g530[2].step.step_s == Approx(55.45).epsilon(0.15));
  Workload g175 = preset("gpt3-175b");
  g175.dp = 4;
  const auto s175 = predict(g175, 76.78, {48, 96, 192}, {});
  CHECK(s175[1].step.step_s == Approx(39.42).epsilon(0.15));
  CHECK(s175[2].step.step_s == Approx(20.83).epsilon(0.15));
  // MegaScale, Table 2, Megatron-LM rows.
  const std::map<int, int> batch = {{32, 768},   {64, 768},   {96, 768},    {128, 768},
                                    {384, 6144}, {768, 6144}, {1024, 6144}, {1536, 6144}};
  const auto ms =
      predict(preset("megascale-175b"), 40.0, {32, 64, 96, 128, 384, 768, 1024, 1536}, batch);
  const std::vector<double> published = {40.0, 21.2, 15.2, 11.9, 29.02, 14.78, 12.24, 8.57};
  REQUIRE(ms.size() == published.size());
  for (std::size_t i = 1; i < ms.size(); ++i) {
    INFO(ms[i].nodes << " nodes");
    CHECK(ms[i].step.step_s == Approx(published[i]).epsilon(0.15));
  }
}
