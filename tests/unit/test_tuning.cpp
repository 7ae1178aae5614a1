// Tuning tables: crossovers derived from measured rows, selection by size, the default rule,
// and the JSON round trip with clear errors for malformed tables.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/core/error.hpp"
#include "results/tuning_json.hpp"

using namespace ibscope;
using ibscope::results::to_json;  // the tuning section's JSON (private to src/results/)
using ibscope::results::tuning_from_json;

namespace {

measure::CollectiveRow row(const std::string& algo, std::uint64_t bytes, double p50_us,
                           bool in_place = false, std::uint64_t wrong = 0) {
  measure::CollectiveRow r;
  r.collective = Collective::kAllreduce;
  r.algorithm = algo;
  r.type = DataType::kFloat32;
  r.op = ReduceOp::kSum;
  r.in_place = in_place;
  r.size_bytes = bytes;
  r.ranks = 4;
  r.iteration_us.n = 5;
  r.iteration_us.p50 = p50_us;
  r.time_us = p50_us;
  r.wrong = wrong;
  return r;
}

}  // namespace

TEST_CASE("tuning: crossovers are placed at the measured sizes", "[tuning]") {
  const std::vector<measure::CollectiveRow> rows = {
      row("rd", 8, 1.0),       row("ring", 8, 5.0),       // rd
      row("rd", 1024, 2.0),    row("ring", 1024, 6.0),    // rd
      row("rd", 65536, 50.0),  row("ring", 65536, 30.0),  // ring
      row("rd", 1 << 20, 900), row("ring", 1 << 20, 400),
      row("rd", 0, 0.1),       row("ring", 0, 9.0),  // size 0 ignored
  };
  const auto t = collectives::derive_tuning(rows, 1);
  REQUIRE(t.entries.size() == 1);
  const auto& e = t.entries[0];
  CHECK(e.collective == "allreduce");
  CHECK(e.ranks == 4);
  CHECK(e.hosts == 1);
  REQUIRE(e.ranges.size() == 2);
  CHECK(e.ranges[0].algorithm == "rd");
  CHECK(e.ranges[0].max_bytes == 1024);
  CHECK(e.ranges[1].algorithm == "ring");
  CHECK(e.ranges[1].max_bytes == UINT64_MAX);
  CHECK(collectives::select_algorithm(t, Collective::kAllreduce, 4, 1, 0) == "rd");
  CHECK(collectives::select_algorithm(t, Collective::kAllreduce, 4, 1, 1024) == "rd");
  CHECK(collectives::select_algorithm(t, Collective::kAllreduce, 4, 1, 1025) == "ring");
  CHECK(collectives::select_algorithm(t, Collective::kAllreduce, 4, 1, 1ULL << 40) == "ring");
  // Other rank or host counts, or another collective: no answer (the caller falls back).
  CHECK_FALSE(collectives::select_algorithm(t, Collective::kAllreduce, 8, 1, 8));
  CHECK_FALSE(collectives::select_algorithm(t, Collective::kAllreduce, 4, 2, 8));
  CHECK_FALSE(collectives::select_algorithm(t, Collective::kReduceScatter, 4, 1, 8));
}

TEST_CASE("tuning: wrong results disqualify and out-of-place rows win over in-place", "[tuning]") {
  const std::vector<measure::CollectiveRow> rows = {
      row("rd", 64, 1.0, false, 3), row("ring", 64, 5.0),  // rd was wrong: ring
      row("rd", 128, 9.0),          row("ring", 128, 5.0),
      row("rd", 128, 1.0, true),  // in-place faster, but out-of-place decides
  };
  const auto t = collectives::derive_tuning(rows, 1);
  REQUIRE(t.entries.size() == 1);
  REQUIRE(t.entries[0].ranges.size() == 1);
  CHECK(t.entries[0].ranges[0].algorithm == "ring");
}

TEST_CASE("tuning: one algorithm alone makes no table", "[tuning]") {
  CHECK(collectives::derive_tuning({row("ring", 8, 1), row("ring", 16, 1)}, 1).entries.empty());
  CHECK(collectives::derive_tuning({}, 1).entries.empty());
}

TEST_CASE("tuning: the default rule", "[tuning]") {
  CHECK(collectives::default_algorithm(Collective::kAllreduce, 8, 8) == "rd");
  CHECK(collectives::default_algorithm(Collective::kAllreduce, 8, 16 * 1024) == "rd");
  CHECK(collectives::default_algorithm(Collective::kAllreduce, 8, 16 * 1024 + 1) == "rhd");
  CHECK(collectives::default_algorithm(Collective::kAllreduce, 8, 512 * 1024 + 1) == "ring");
  CHECK(collectives::default_algorithm(Collective::kAllreduce, 1, 8) == "ring");
  CHECK(collectives::default_algorithm(Collective::kBroadcast, 8, 8) == "ring");
  CHECK(collectives::default_algorithm(Collective::kAllgather, 8, 1 << 30) == "ring");
}

TEST_CASE("tuning: the default rule picks hier on one host and for large sizes across hosts",
          "[tuning]") {
  using collectives::default_rule_picks_hier;
  constexpr auto kMin = collectives::kHierAcrossHostsMinBytes;
  constexpr auto kAr = Collective::kAllreduce;
  // One host, several ranks: every size.
  CHECK(default_rule_picks_hier(kAr, 2, 1, 8));
  CHECK(default_rule_picks_hier(kAr, 8, 1, 1ULL << 30));
  CHECK_FALSE(default_rule_picks_hier(kAr, 1, 1, 1ULL << 30));
  // 4 hosts x 2 ranks: from the threshold only.
  CHECK_FALSE(default_rule_picks_hier(kAr, 8, 4, kMin - 1));
  CHECK(default_rule_picks_hier(kAr, 8, 4, kMin));
  // One rank per host: nothing to share in a host, the flat algorithms stay.
  CHECK_FALSE(default_rule_picks_hier(kAr, 4, 4, 1ULL << 30));
  CHECK_FALSE(collectives::default_rule_may_pick_hier(kAr, 4, 4));
  CHECK(collectives::default_rule_may_pick_hier(kAr, 8, 4));
  // Only all-reduce has hier.
  CHECK_FALSE(default_rule_picks_hier(Collective::kBroadcast, 8, 1, 8));
  CHECK_FALSE(collectives::default_rule_may_pick_hier(Collective::kAllgather, 8, 1));
}

TEST_CASE("tuning: JSON round trip", "[tuning]") {
  const auto t = collectives::derive_tuning(
      {row("rd", 8, 1), row("ring", 8, 2), row("rd", 4096, 9), row("ring", 4096, 3)}, 2);
  const auto back = tuning_from_json(to_json(t), "x.json");
  REQUIRE(back.entries.size() == 1);
  CHECK(back.source == "x.json");
  CHECK(back.entries[0].hosts == 2);
  REQUIRE(back.entries[0].ranges.size() == 2);
  CHECK(back.entries[0].ranges[0].max_bytes == 8);
  CHECK(back.entries[0].ranges[1].max_bytes == UINT64_MAX);
  CHECK(to_json(t)["entries"][0]["ranges"][1]["max_bytes"].is_null());
}

TEST_CASE("tuning: malformed tables are usage errors naming the field", "[tuning]") {
  using nlohmann::json;
  auto entry = [](json ranges) {
    return json{
        {"entries",
         json::array(
             {{{"collective", "allreduce"}, {"ranks", 4}, {"hosts", 1}, {"ranges", ranges}}})}};
  };
  const std::vector<std::pair<json, std::string>> cases = {
      {json::array(), "expected an object"},
      {json{{"entries", 3}}, "expected an object"},
      {json{{"entries", json::array({{{"collective", "allreduce"}}})}}, "entries[0]"},
      {entry(json::array()), "non-empty"},
      {entry(json::array({{{"max_bytes", nullptr}, {"algorithm", "magic"}}})), "algorithm 'magic'"},
      {entry(json::array({{{"max_bytes", nullptr}, {"algorithm", "ring"}},
                          {{"max_bytes", nullptr}, {"algorithm", "ring"}}})),
       "only the last range"},
      {entry(json::array({{{"max_bytes", 100}, {"algorithm", "ring"}},
                          {{"max_bytes", 50}, {"algorithm", "ring"}},
                          {{"max_bytes", nullptr}, {"algorithm", "ring"}}})),
       "must increase"},
      {entry(json::array({{{"max_bytes", -1}, {"algorithm", "ring"}}})), "non-negative"},
      {entry(json::array({{{"max_bytes", "8"}, {"algorithm", "ring"}}})), "non-negative"},
  };
  for (const auto& [doc, text] : cases) {
    INFO(doc.dump());
    CHECK_THROWS_AS(tuning_from_json(doc, "t.json"), UsageError);
    CHECK_THROWS_WITH(tuning_from_json(doc, "t.json"),
                      Catch::Contains(text) && Catch::Contains("t.json"));
  }
  json bad_collective = entry(json::array({{{"max_bytes", nullptr}, {"algorithm", "ring"}}}));
  bad_collective["entries"][0]["collective"] = "scan";
  CHECK_THROWS_WITH(tuning_from_json(bad_collective, "t.json"),
                    Catch::Contains("unknown collective 'scan'"));
  // Found while writing tests/fuzz/targets/fuzz_tuning.cpp: get<int>() read 4294967297 as 1.
  for (const json& ranks : {json(4294967297LL), json(18446744073709551615ULL), json(0)}) {
    json big = entry(json::array({{{"max_bytes", nullptr}, {"algorithm", "ring"}}}));
    big["entries"][0]["ranks"] = ranks;
    CHECK_THROWS_WITH(tuning_from_json(big, "t.json"),
                      Catch::Contains("entries[0]: ranks and hosts must be 1..2147483647"));
  }
}

TEST_CASE("tuning: TuningRows derives a table from two algorithms run by name only", "[tuning]") {
  collectives::TuningRows one;
  one.add({row("ring", 8, 5.0), row("ring", 1024, 6.0)});
  CHECK_FALSE(one.derive(1).has_value());

  collectives::TuningRows picks;  // -A auto's picks are not measurements at every size
  auto picked = row("rd", 8, 1.0);
  picked.selected_by = "default";
  picks.add({picked, row("ring", 8, 5.0)});
  CHECK_FALSE(picks.derive(1).has_value());

  collectives::TuningRows two;
  auto with_samples = row("rd", 8, 1.0);
  with_samples.samples_us = {1.0, 1.1};
  two.add({with_samples, row("ring", 8, 5.0)});
  two.add({row("rd", 1 << 20, 900.0), row("ring", 1 << 20, 400.0)});
  const auto table = two.derive(1);
  REQUIRE(table.has_value());
  const auto expected =
      collectives::derive_tuning({row("rd", 8, 1.0), row("ring", 8, 5.0), row("rd", 1 << 20, 900.0),
                                  row("ring", 1 << 20, 400.0)},
                                 1);
  REQUIRE(table->entries.size() == expected.entries.size());
  for (std::size_t i = 0; i < expected.entries.size(); ++i) {
    const auto& got = table->entries[i].ranges;
    const auto& want = expected.entries[i].ranges;
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      CHECK(got[k].algorithm == want[k].algorithm);
      CHECK(got[k].max_bytes == want[k].max_bytes);
    }
  }
}
