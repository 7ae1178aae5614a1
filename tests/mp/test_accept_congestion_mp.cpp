// `ibscope accept --congestion` across real local ranks: the phase runs end to end (victims
// alone, then under each congestor, which stop cleanly), writes the acceptance section's
// `congestion` member and prints its table; a job too small to split is a usage error.

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "results_json.hpp"

using namespace ibscope::test;

TEST_CASE("accept --congestion runs victims and congestors end to end and writes the section",
          "[mp][accept][congestion]") {
  const std::string dir = make_temp_dir();
  // Limits no measurement on a busy 2-core host can reach: this test is about the plumbing.
  const auto res = run_process({{"accept",
                                 "--np",
                                 "4",
                                 "--skip-allreduce",
                                 "--bw-size",
                                 "64K",
                                 "--bw-iters",
                                 "2",
                                 "--lat-iters",
                                 "50",
                                 "--congestion",
                                 "--congestors",
                                 "incast,alltoall,broadcast",
                                 "--ar-iters",
                                 "5",
                                 "--congestion-ar-size",
                                 "64K",
                                 "--congestor-size",
                                 "64K",
                                 "--max-congestion-impact",
                                 "1000",
                                 "--max-congestion-tail-impact",
                                 "1000",
                                 "--timeout",
                                 "30",
                                 "--out",
                                 dir},
                                {},
                                120});
  INFO(describe(res));
  REQUIRE(res.exit_code == 0);
  CHECK(res.out.find("ibscope accept: PASS") != std::string::npos);
  CHECK(res.out.find("congestor  victim_metric") != std::string::npos);
  CHECK(res.out.find("# acceptance: congestion: victims under broadcast congestors") !=
        std::string::npos);
  const auto doc = load_run_results(res);
  const auto& c = doc.at("acceptance").at("congestion");
  CHECK(c.at("pass").get<bool>());
  CHECK_FALSE(c.at("by_host").get<bool>());  // one host: split by rank
  CHECK(c.at("victim_ranks") == nlohmann::json::array({1, 3}));
  CHECK(c.at("congestor_ranks") == 2);
  CHECK(c.at("victim_pairs") == 1);
  REQUIRE(c.at("impacts").size() == 12);  // 4 metrics x 3 congestors
  for (const auto& i : c.at("impacts")) {
    INFO(i.dump());
    CHECK(i.at("isolated").get<double>() > 0);
    CHECK(i.at("congested").get<double>() > 0);
    CHECK(i.at("impact").get<double>() > 0);
  }
  REQUIRE(c.at("loads").size() == 3);
  for (const auto& l : c.at("loads")) {
    INFO(l.dump());
    CHECK(l.at("rounds").get<std::uint64_t>() >= 1);  // the load ran, and stopped
    CHECK(l.at("received_gbps").get<double>() > 0);
  }
  CHECK(doc.at("complete").get<bool>());
  // The report reads the section back and shows its table.
  const std::string html = dir + "/report.html";
  const auto rep = run_process({{"report", results_path(res), "-o", html}, {}, 60});
  INFO(describe(rep));
  REQUIRE(rep.exit_code == 0);
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(page.find("Congestion: victims under congestors") != std::string::npos);
  CHECK(page.find("tail_busbw_gbps") != std::string::npos);
}

TEST_CASE("accept --congestion: a job that cannot be split is a usage error",
          "[mp][accept][congestion]") {
  const auto res = run_process({{"accept", "--np", "3", "--skip-allreduce", "--congestion",
                                 "--timeout", "30", "--out", make_temp_dir()},
                                {},
                                60});
  INFO(describe(res));
  CHECK(res.exit_code == 2);
  CHECK((res.out + res.err).find("at least 2 victim and 2 congestor ranks") != std::string::npos);
  const auto bad = run_process(
      {{"accept", "--np", "4", "--congestion", "--congestors", "incast,storm"}, {}, 30});
  CHECK(bad.exit_code == 2);
  CHECK((bad.out + bad.err).find("'storm' is not a congestor") != std::string::npos);
}
