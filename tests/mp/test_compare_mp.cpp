// `ibscope compare` on real runs: two runs of the same small `ibscope run` (2 local ranks, a
// ring all-reduce of 1 KiB and a p2p latency of 1 KiB) show no regression; a third run with the
// delay hook (docs/fault-hooks.md: rank 1 sleeps before every timed collective call) shows one
// in the collective rows, which the hook slows, while the p2p row, which it does not slow,
// does not carry the delay.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {

std::vector<std::string> small_run(const std::string& dir) {
  return {"run",     "--np",
          "2",       "-A",
          "ring",    "--sizes",
          "1K",      "-n",
          "3",       "-w",
          "1",       "--warmup-ms",
          "0",       "--p2p-minbytes",
          "1K",      "--p2p-maxbytes",
          "1K",      "--p2p-tests",
          "latency", "--p2p-iters",
          "50",      "--p2p-warmup",
          "5",       "--timeout",
          "30",      "--out",
          dir};
}

// The results file of one run, with the environment `env` added.
std::string measured(const std::map<std::string, std::string>& env) {
  const std::string dir = make_temp_dir();
  const auto res = run_process({small_run(dir), env, 120});
  INFO(describe(res));
  REQUIRE(res.exit_code == 0);
  const std::string path = results_path(res);
  REQUIRE(!path.empty());
  return path;
}

// The fields of the compare table's row whose key starts with `key`: key, size (two
// fields), A_us, B_us, time_%, busbw_%, band_%, verdict.
std::vector<std::string> row_of(const std::string& out, const std::string& key) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    return f;
  }
  return {};
}

std::string verdict_of(const std::string& out, const std::string& key) {
  const auto f = row_of(out, key);
  return f.empty() ? "" : f.back();
}

double b_us_of(const std::string& out, const std::string& key) {
  const auto f = row_of(out, key);
  return f.size() < 9 ? -1 : std::stod(f[f.size() - 5]);
}

}  // namespace

TEST_CASE(
    "compare: the same command twice is no regression, the delay hook is one in the "
    "delayed rows only",
    "[mp][compare]") {
  // 300 ms per timed call on rank 1: far above what load does to a 1 KiB all-reduce here
  // (milliseconds at worst), and nothing to p2p, which the hook leaves alone. The threshold is
  // wide for the same reason. Two runs of the same command on a loaded 2-core CI machine can
  // still differ a thousand-fold in small-message time when one of them is descheduled (2 us
  // against 6 ms, measured): the check is then taken again with new runs, up to 3 times; a
  // comparison that is wrong every time fails.
  const std::string threshold = "1000";
  const auto same_is_clean = [&](const std::string& a) {
    const std::string again = measured({});
    const auto same = run_cli({"compare", a, again, "--threshold", threshold}, 60);
    UNSCOPED_INFO(describe(same));
    return same.exit_code == 0 &&
           same.out.find("no regression beyond the threshold") != std::string::npos &&
           same.out.find("SLOWER") == std::string::npos;
  };
  bool clean = false;
  std::string a;
  for (int attempt = 0; attempt < 3 && !clean; ++attempt) {
    a = measured({});
    clean = same_is_clean(a);
  }
  CHECK(clean);

  const std::string delayed = measured({{"IBSCOPE_FAULT_DELAY_RANK", "1:300000"}});
  const std::string page = make_temp_dir() + "/compare.html";
  const auto worse =
      run_cli({"compare", a, delayed, "--threshold", threshold, "--report", page}, 60);
  INFO(describe(worse));
  CHECK(worse.exit_code == 1);
  {
    std::ifstream in(page);
    std::ostringstream html;
    html << in.rdbuf();
    CHECK(html.str().find("<h2>Comparison: B against A</h2>") != std::string::npos);
    CHECK(html.str().find("SLOWER (beyond the threshold)") != std::string::npos);
  }
  CHECK(worse.out.find("REGRESSION (") != std::string::npos);
  CHECK(verdict_of(worse.out, "allreduce/ring/float/sum/p2/out/host") == "SLOWER");
  CHECK(verdict_of(worse.out, "allreduce/ring/float/sum/p2/in/host") == "SLOWER");
  // The p2p row, which the hook does not touch, does not carry the delay: its time in B is far
  // below 300 ms. (Its verdict is usually noise; on this loaded 2-core machine a p2p latency
  // can go from 2 us to 6-8 ms between two runs when the ranks are descheduled, measured in 5 of
  // 6 runs at load average 9, and compare then rightly calls it slower: the test does not ask for
  // "noise".)
  const std::string p2p = "p2p/latency/0-1/w1/host";
  CHECK(!verdict_of(worse.out, p2p).empty());
  const double p2p_b_us = b_us_of(worse.out, p2p);
  CHECK(p2p_b_us >= 0);
  CHECK(p2p_b_us < 30000);
  if (verdict_of(worse.out, p2p) == "SLOWER") WARN("p2p latency slower under load: " << p2p_b_us);
  CHECK(b_us_of(worse.out, "allreduce/ring/float/sum/p2/out/host") >= 300000);

  // The other way round, the delayed rows are improvements.
  const auto better = run_cli({"compare", delayed, a, "--threshold", threshold}, 60);
  INFO(describe(better));
  CHECK(verdict_of(better.out, "allreduce/ring/float/sum/p2/out/host") == "faster");
  CHECK(verdict_of(better.out, "allreduce/ring/float/sum/p2/in/host") == "faster");
}

TEST_CASE("compare: files without a row in common, and nccl-tests output on one side",
          "[mp][compare]") {
  const std::string fixtures = IBSCOPE_NCCL_TESTS_FIXTURES;
  const std::string nccl = fixtures + "/all_reduce_perf-gh200-2ranks.txt";
  const auto same = run_cli({"compare", nccl, nccl}, 60);
  INFO(describe(same));
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("# compare: 16 row(s), 16 within noise") != std::string::npos);

  const std::string a = measured({});
  const auto none = run_cli({"compare", a, nccl}, 60);
  INFO(describe(none));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no row in common") != std::string::npos);
}
