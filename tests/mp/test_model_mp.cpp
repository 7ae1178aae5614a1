// `ibscope model` as a user meets it: a preset on given tiers prints the breakdown, the
// network's share, the what-ifs and the sensitivity; a broken workload file exits 2 naming
// the file and the field.

#include <catch2/catch.hpp>
#include <fstream>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {
ProcessResult run_model(std::vector<std::string> args) {
  args.insert(args.begin(), "model");
  return run_process({std::move(args), {}, 30});
}
const std::vector<std::string> kTiers = {"--inter-bw-gbps", "24", "--inter-lat-us",  "5",
                                         "--inter-links",   "8",  "--intra-bw-gbps", "300",
                                         "--intra-lat-us",  "2"};
}  // namespace

TEST_CASE("model: a preset on given tiers", "[mp][cli][model]") {
  std::vector<std::string> args = {"--preset", "gpt3-175b", "--what-if", "inter-bw=2,nodes=96"};
  args.insert(args.end(), kTiers.begin(), kTiers.end());
  const auto r = run_model(args);
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("% of the step") != std::string::npos);
  CHECK(r.out.find("inter-bw=2") != std::string::npos);
  CHECK(r.out.find("nodes=96") != std::string::npos);
  CHECK(r.out.find("elasticity") != std::string::npos);

  // --json writes the same figures (and never overwrites).
  const std::string json_path = make_temp_dir() + "/m.json";
  args.insert(args.end(), {"--json", json_path});
  const auto j = run_model(args);
  INFO(describe(j));
  REQUIRE(j.exit_code == 0);
  std::ifstream in(json_path);
  const auto out = nlohmann::json::parse(in);
  const auto& b = out.at("breakdown");
  CHECK(b.at("step_s").get<double>() > 0);
  CHECK(b.at("network_share").get<double>() ==
        Approx(b.at("network_s").get<double>() / b.at("step_s").get<double>()));
  CHECK(out.at("what_if").size() == 2);
  CHECK(out.at("sensitivity").at("ds_dbw_s_per_gbps").get<double>() < 0);
  CHECK(run_model(args).exit_code != 0);  // the file exists: not overwritten

  const auto p = run_model({"--preset", "llama3-70b", "--print-workload"});
  REQUIRE(p.exit_code == 0);
  const auto doc = nlohmann::json::parse(p.out);
  CHECK(doc.at("model").at("kv_heads") == 8);
}

TEST_CASE("model: bad workload files and flags exit 2", "[mp][cli][model]") {
  const std::string dir = make_temp_dir();
  const std::string bad = dir + "/w.json";
  std::ofstream(bad) << R"({"model": {"layers": 4}})";
  auto r = run_model({"--workload", bad});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(bad + ": model.hidden: missing") != std::string::npos);

  std::vector<std::string> nodes = {"--preset", "gpt3-175b", "--nodes", "5"};
  nodes.insert(nodes.end(), kTiers.begin(), kTiers.end());
  r = run_model(nodes);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--what-if nodes=5") != std::string::npos);

  r = run_model({"--preset", "gpt5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown preset 'gpt5'") != std::string::npos);

  std::vector<std::string> args = {"--preset", "gpt3-175b", "--what-if", "nodes=7"};
  args.insert(args.end(), kTiers.begin(), kTiers.end());
  r = run_model(args);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("nodes=7") != std::string::npos);
}

TEST_CASE("model: calibrate on one step and print a scaling table with its CSV",
          "[mp][cli][model]") {
  const std::string dir = make_temp_dir();
  const std::string csv = dir + "/scale.csv";
  std::vector<std::string> args = {"--preset",    "gpt3-175b", "--what-if", "",
                                   "--calibrate", "step=25",   "--scale",   "nodes=48..384",
                                   "--scale-csv", csv};
  args.insert(args.end(), kTiers.begin(), kTiers.end());
  const auto r = run_model(args);
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# calibration: step 25 s -> achieved_fraction") != std::string::npos);
  CHECK(r.out.find("efficiency(%)") != std::string::npos);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  CHECK(header.rfind("nodes,gpus,tp,pp,dp,vp,global_batch", 0) == 0);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  CHECK(lines == 4);                      // 48, 96, 192, 384
  CHECK(run_model(args).exit_code != 0);  // the CSV exists: not overwritten

  // --json carries the calibration and the curve.
  const std::string json_path = dir + "/m.json";
  std::vector<std::string> with_json = args;
  with_json[with_json.size() - kTiers.size() - 1] = dir + "/scale2.csv";
  with_json.insert(with_json.end(), {"--json", json_path});
  const auto j = run_model(with_json);
  INFO(describe(j));
  REQUIRE(j.exit_code == 0);
  std::ifstream jin(json_path);
  const auto doc = nlohmann::json::parse(jin);
  CHECK(doc.at("calibration").at("kind") == "step");
  CHECK(doc.at("scaling").size() == 4);

  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--calibrate", "step=x"},
        std::vector<std::string>{"--scale", "nodes=50"},
        std::vector<std::string>{"--scale-csv", dir + "/other.csv"}}) {
    std::vector<std::string> a = {"--preset", "gpt3-175b"};
    a.insert(a.end(), bad.begin(), bad.end());
    a.insert(a.end(), kTiers.begin(), kTiers.end());
    const auto e = run_model(a);
    INFO(describe(e));
    CHECK(e.exit_code == 2);
    CHECK(e.out.empty());
  }
}
