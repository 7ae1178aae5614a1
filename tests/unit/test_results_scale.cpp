// Results at scale (issue 23): a 10,752-rank job (1,344 hosts x 8 ranks) writes a results file
// of bounded size that validates, round-trips and renders a bounded report; per-rank samples
// above 64 ranks only with --keep-samples (results/rank_samples.hpp). Timings are not tested
// here: bench/results_scale_bench.cpp measures them.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "common/synthetic_results.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/rank_samples.hpp"
#include "ibscope/results/writer.hpp"

namespace results = ibscope::results;
using ibscope::testing::synthetic_results;
using ibscope::testing::SyntheticJob;
using nlohmann::json;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("results scale: arrivals are summarised per iteration over the ranks",
          "[results][scale]") {
  const double nan = std::nan("");
  const auto s = results::summarise_arrivals({{0, 4, 1, 3}, {2, nan, 0, 9}, {}});
  REQUIRE(s.size() == 3);
  CHECK(s[0] == results::ArrivalSummary{4, 1, 4, 4, 1});
  CHECK(s[1] == results::ArrivalSummary{3, 2, 9, 9, 3});
  CHECK(s[2] == results::ArrivalSummary{0, 0, 0, 0, -1});
  const auto rss = results::summarise_rss({5, 9, 1, 7});
  CHECK(rss == results::RssSummary{4, 1, 5, 9, 1});
}

TEST_CASE("results scale: per-rank samples are kept up to 64 ranks and with keep_rank_samples",
          "[results][scale]") {
  SyntheticJob small{.hosts = 8, .ranks_per_host = 8, .max_bytes = 1024};  // 64 ranks
  SyntheticJob large = small;
  large.hosts = 9;  // 72 ranks
  SyntheticJob kept = large;
  kept.keep_rank_samples = true;

  const json s = json::parse(results::to_text(synthetic_results(small)));
  const json& srow = s["acceptance"]["stragglers"]["rows"][0];
  CHECK(srow["arrival_us"].size() == 20);
  CHECK(srow["arrival_us"][0].size() == 64);
  CHECK_FALSE(srow.contains("arrivals"));
  CHECK(s["soak"]["windows"][0]["rss_bytes"].size() == 64);

  const std::string large_text = results::to_text(synthetic_results(large));
  const json l = json::parse(large_text);
  const json& lrow = l["acceptance"]["stragglers"]["rows"][0];
  CHECK(lrow["arrival_us"].empty());
  CHECK(lrow["arrivals"].size() == 20);
  CHECK(lrow["arrivals"][0]["ranks"] == 72);
  CHECK(l["soak"]["windows"][0]["rss_bytes"].empty());
  CHECK(l["soak"]["windows"][0]["rss_summary"]["ranks"] == 72);
  CHECK(l["soak"]["summary"]["rss_growth_bytes"].size() == 72);  // once per rank, kept

  const json k = json::parse(results::to_text(synthetic_results(kept)));
  CHECK(k["acceptance"]["stragglers"]["rows"][0]["arrival_us"][0].size() == 72);
  CHECK(k["soak"]["windows"][0]["rss_bytes"].size() == 72);

  // A summarised file reads back and writes back byte for byte.
  const results::Document back = results::parse(large_text, "large.json");
  REQUIRE(back.acceptance->stragglers->rows[0].arrivals.size() == 20);
  CHECK(back.soak->window_rss.size() == 4);
  CHECK(results::to_text(back) == large_text);
}

TEST_CASE(
    "results scale: UCX lanes of the rank pairs of more than 64 ranks are grouped by description",
    "[results][scale]") {
  results::Document d = synthetic_results(SyntheticJob{.hosts = 9, .max_bytes = 8});
  d.environment.transport_classes.reset();
  d.environment.transports.emplace();
  for (int a = 0; a < 72; ++a) {
    for (int b = 0; b < 72; ++b) {
      if (a != b)
        (*d.environment.transports)[fmt::format("{}->{}", a, b)] =
            a / 8 == b / 8 ? "shm" : "rc_mlx5";
    }
  }
  const json grouped = json::parse(results::to_text(d))["environment"];
  CHECK_FALSE(grouped.contains("transports"));
  REQUIRE(grouped["transport_classes"].size() == 2);
  CHECK(grouped["transport_classes"][0]["pairs"].get<int>() +
            grouped["transport_classes"][1]["pairs"].get<int>() ==
        72 * 71);
  d.keep_rank_samples = true;
  const json kept = json::parse(results::to_text(d))["environment"];
  CHECK(kept["transports"].size() == 72 * 71);
  CHECK_FALSE(kept.contains("transport_classes"));
}

// results/README.md, "Per-rank data and file size": about 17.5 kB per host (its topology) +
// 0.67 kB per rank and per link + 1.2 kB per sweep row, 38.7 MB for this job as measured; the
// bound leaves room for realistic growth (more GIDs per port) and fails on anything growing
// with ranks x iterations (kept arrivals alone add ~23 MB) or ranks^2.
constexpr std::size_t kMaxFileBytes10752 = 50'000'000;
constexpr std::size_t kMaxReportBytes = 2'000'000;

TEST_CASE("results scale: a 10752-rank file is bounded and validates and loads and reports",
          "[results][scale]") {
  const SyntheticJob job;  // 1,344 hosts x 8 ranks
  REQUIRE(job.ranks() == 10752);
  const std::string text = results::to_text(synthetic_results(job));
  INFO("file bytes: " << text.size());
  CHECK(text.size() < kMaxFileBytes10752);

  // What `ibscope validate` and every loader do: parse, schema check, typed read.
  const results::Document doc = results::parse(text, "scale.json");
  CHECK(doc.job.ranks == 10752);
  CHECK(doc.topology->size() == 1344);
  CHECK(doc.collectives.rows.size() == 5 * 31);
  CHECK(doc.acceptance->links.size() == 10752);
  CHECK(doc.soak->windows.size() == 4);
  CHECK(results::to_text(doc) == text);

  // What `ibscope report` renders: bounded, and no table with a row per rank.
  const std::string page =
      ibscope::output::html_report({ibscope::output::ReportFile{"scale.json", "scale", doc}}, {});
  INFO("report bytes: " << page.size());
  CHECK(page.size() < kMaxReportBytes);
  CHECK(count_of(page, "<tr>") < 2000);
  CHECK(page.find("gpu-node-1344") != std::string::npos);  // the hosts are named
}
