// ibscope soak across real processes: a short soak passes with every window printed and the
// results file valid; the checks can fail (an injected leak fails the RSS check, an injected
// corruption fails #wrong); bad flags are usage errors. The 2-minute soak is ctest soak/ci.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {

ProcessResult soak(int np, std::vector<std::string> extra,
                   std::map<std::string, std::string> env = {}) {
  std::vector<std::string> args = {"soak", "--np",  std::to_string(np), "--timeout",
                                   "30",   "--out", make_temp_dir()};
  args.insert(args.end(), extra.begin(), extra.end());
  // Under ASan a freed block waits in a 256 MiB quarantine before its memory is reused, so the
  // allocations that come and go in every iteration read as RSS growth: 14-16 MiB over 5 s at
  // 3 ranks with the verification of issue 21 (not seen before it; the cause of the extra churn
  // was not pinned down). With a 1 MiB quarantine the growth stays under the limit, so the RSS
  // check is about leaks again; release builds ignore the variable.
  if (!env.contains("ASAN_OPTIONS")) {
    const char* asan = std::getenv("ASAN_OPTIONS");
    env["ASAN_OPTIONS"] =
        std::string(asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "") +
        "quarantine_size_mb=1";
  }
  return run_process({args, std::move(env), 90});
}

// Table rows of window `index` (lines starting with the window number, then its end time).
int rows_of_window(const std::string& out, int index) {
  std::istringstream in(out);
  const std::regex row("^ +" + std::to_string(index) + " +[0-9]+\\.[0-9] +ring .*");
  int n = 0;
  for (std::string line; std::getline(in, line);) n += std::regex_match(line, row) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("soak: 6 s over 3 ranks passes, one row per window and size, #wrong 0", "[mp][soak]") {
  const auto r = soak(3, {"--duration", "6s", "--window", "1s", "--sizes", "4K,256K"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Soak verdict         : PASS") != std::string::npos);
  CHECK(r.out.find("rss_growth(MiB)") != std::string::npos);
  for (int w = 0; w < 5; ++w) CHECK(rows_of_window(r.out, w) == 2);
  const auto doc = load_run_results(r);
  CHECK(doc.at("command").at("subcommand") == "soak");
  const auto& s = doc.at("soak");
  CHECK(s.at("params").at("duration_s").get<double>() == 6);
  CHECK(s.at("params").at("window_s").get<double>() == 1);
  const auto& windows = s.at("windows");
  REQUIRE(windows.size() >= 5);
  REQUIRE(windows.size() <= 7);
  for (const auto& w : windows) {
    CHECK(w.at("rss_bytes").size() == 3);
    // The host's NICs over the window (the namespace's TCP at least: every Linux host has it).
    REQUIRE(w.contains("nic_counters"));
    CHECK_FALSE(w.at("nic_counters").empty());
    REQUIRE(w.at("cases").size() == 2);
    for (const auto& c : w.at("cases")) {
      CHECK(c.at("wrong").get<std::uint64_t>() == 0);
      CHECK(c.at("iterations").get<std::uint64_t>() > 0);
      CHECK(c.at("time_us").at("p50").get<double>() > 0);
      CHECK(c.at("busbw_gbps").get<double>() > 0);
    }
  }
  CHECK(windows.back().at("end_s").get<double>() >= 6);
  CHECK(windows.back().at("end_s").get<double>() < 8);
  const auto& sum = s.at("summary");
  CHECK(sum.at("pass") == true);
  CHECK(sum.at("wrong").get<std::uint64_t>() == 0);
  CHECK(sum.at("rss_growth_bytes").size() == 3);
  REQUIRE(sum.at("cases").size() == 2);
  CHECK(sum.at("cases").at(0).at("first_window") == 1);
  CHECK(sum.at("cases").at(1).at("size_bytes") == 256 * 1024);
}

TEST_CASE("soak: a leak injected below the soak loop fails it on RSS", "[mp][soak]") {
  const auto r =
      soak(2, {"--duration", "4s", "--window", "1s", "--sizes", "4K", "--max-rss-growth", "2M"},
           {{"IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S", "4M"}});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("Soak verdict         : FAIL") != std::string::npos);
  CHECK(r.err.find("soak FAILED: RSS of rank 0 grew by") != std::string::npos);
  CHECK(r.err.find("more than --max-rss-growth 2 MiB") != std::string::npos);
  const auto doc = load_run_results(r);
  CHECK(doc.at("soak").at("summary").at("pass") == false);
  CHECK(doc.at("soak").at("summary").at("wrong").get<std::uint64_t>() == 0);
  CHECK(doc.at("soak").at("summary").at("rss_growth_bytes").at(1).get<std::int64_t>() > 2 << 20);
}

TEST_CASE("soak: corrupted results (IBSCOPE_FAULT_CORRUPT_RANK) fail it on #wrong", "[mp][soak]") {
  const auto r = soak(2, {"--duration", "2s", "--window", "1s", "--sizes", "4K"},
                      {{"IBSCOPE_FAULT_CORRUPT_RANK", "1"}});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("Soak verdict         : FAIL") != std::string::npos);
  CHECK(r.err.find("wrong elements in total") != std::string::npos);
  CHECK(r.err.find("soak FAILED: fault hook IBSCOPE_FAULT_CORRUPT_RANK=1 (every rank) is set") !=
        std::string::npos);
  const auto doc = load_run_results(r);
  CHECK(doc.at("soak").at("summary").at("wrong").get<std::uint64_t>() > 0);
  CHECK(doc.at("soak").at("windows").at(0).at("cases").at(0).at("wrong").get<std::uint64_t>() ==
        doc.at("soak").at("windows").at(0).at("cases").at(0).at("iterations").get<std::uint64_t>());
}

TEST_CASE("soak: bad durations and windows are usage errors before any rank starts", "[mp][soak]") {
  const std::vector<std::vector<std::string>> bad = {
      {"--duration", "-1"},
      {"--duration", "0"},
      {"--duration", "10s", "--window", "20s"},
      {"--duration", "10s", "--window", "6s"},
      {"--duration", "5x"},
      {"--max-rss-growth", "lots"},
      {"--max-drift", "-5"},
  };
  for (const auto& flags : bad) {
    const auto r = soak(2, flags);
    INFO(flags[0] << " " << flags[1] << "\n" << describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.elapsed_s < 10);
    CHECK(results_path(r).empty());
  }
  const auto r = soak(2, {"--duration", "2s"}, {{"IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S", "x"}});
  CHECK(r.exit_code == 2);
}
