// `ibscope accept --pairs`: emulated hosts with several ranks each (one per "NIC"), paired rail
// to rail in the rounds the mode asks for; the pairs measured are the results file's links.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <set>

#include "emulated_hosts.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// Loopback links on a shared machine differ far more than a fabric's: the relative and latency
// tests are off (a huge --mad-k, --max-latency-ratio 0), so the verdict is the absolute test
// against a rate any loopback link reaches; the pairs measured are what these tests check.
const std::vector<std::string> kQuick = {"accept",
                                         "--transport",
                                         "ucx",
                                         "--timeout",
                                         "30",
                                         "--expect-gbps",
                                         "0.001",
                                         "--link-kind",
                                         "tcp",
                                         "--bw-size",
                                         "64K",
                                         "--bw-iters",
                                         "2",
                                         "--bw-window",
                                         "4",
                                         "--lat-iters",
                                         "20",
                                         "--skip-allreduce",
                                         "--mad-k",
                                         "1000",
                                         "--max-latency-ratio",
                                         "0"};

std::vector<std::string> with(std::vector<std::string> extra) {
  auto args = kQuick;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("accept pairs random K measures K rounds of host pairs rail to rail",
          "[mp][accept][scale]") {
  // 4 emulated hosts x 2 ranks, host-major: rank r on emu{r/2} with local index r%2.
  const std::vector<std::string> hosts = {"emu0", "emu0", "emu1", "emu1",
                                          "emu2", "emu2", "emu3", "emu3"};
  const auto res = run_emulated_ranks(
      hosts, with({"--pairs", "random:2", "--pairs-seed", "7", "--out", make_temp_dir()}));
  for (const auto& r : res) {
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
  }
  CHECK(res[0].out.find("pairs random:2 (seed 7;") != std::string::npos);
  const auto doc = load_run_results(res[0]);
  const auto& a = doc.at("acceptance");
  // 2 rounds x 2 host pairs x 2 rails, every link rail to rail, no host pair twice.
  REQUIRE(a.at("links").size() == 8);
  std::set<std::pair<std::string, std::string>> host_pairs;
  for (const auto& l : a.at("links")) {
    const int ra = l.at("rank_a"), rb = l.at("rank_b");
    CHECK(ra % 2 == rb % 2);
    CHECK(l.at("host_a") != l.at("host_b"));
    host_pairs.insert({l.at("host_a").get<std::string>(), l.at("host_b").get<std::string>()});
  }
  CHECK(host_pairs.size() == 4);
  bool noted = false;
  for (const auto& n : a.at("notes")) {
    const auto text = n.get<std::string>();
    noted = noted || (text.find("random:2 (seed 7;") != std::string::npos &&
                      text.find("2 rounds over 4 hosts, rail to rail (2 rank(s) per host") !=
                          std::string::npos);
  }
  CHECK(noted);
  CHECK(a.at("pass").get<bool>());
}

TEST_CASE("accept pairs ranks when the hosts hold different numbers of them",
          "[mp][accept][scale]") {
  // emu0 holds two ranks, emu1 and emu2 one: rails cannot be matched, so every rank pair is
  // measured (6 pairs in 3 rounds), the pair inside emu0 measured but not judged.
  const auto res = run_emulated_ranks({"emu0", "emu0", "emu1", "emu2"},
                                      with({"--pairs", "all", "--out", make_temp_dir()}));
  for (const auto& r : res) {
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
  }
  CHECK(res[0].out.find("warning: pairs: the hosts hold different numbers of ranks") !=
        std::string::npos);
  const auto doc = load_run_results(res[0]);
  CHECK(doc.at("acceptance").at("links").size() == 5);
}
