// The tuning table of a results file, as `--tuning FILE` reads it (collectives/harness/tuning.hpp).
// The input is the "tuning" section's JSON. Expected rejection: UsageError. Properties: an
// accepted table serializes back to one that parses to the same table, and selecting an
// algorithm from it for any size gives one of its entries' algorithms; the rank and host
// counts read are the ones in the input (no narrowing).

#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/core/error.hpp"
#include "results/tuning_json.hpp"

namespace ib = ibscope;

namespace {

bool same(const ib::collectives::TuningTable& a, const ib::collectives::TuningTable& b) {
  if (a.entries.size() != b.entries.size()) return false;
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const auto& x = a.entries[i];
    const auto& y = b.entries[i];
    if (x.collective != y.collective || x.ranks != y.ranks || x.hosts != y.hosts ||
        x.ranges.size() != y.ranges.size()) {
      return false;
    }
    for (std::size_t j = 0; j < x.ranges.size(); ++j) {
      if (x.ranges[j].max_bytes != y.ranges[j].max_bytes ||
          x.ranges[j].algorithm != y.ranges[j].algorithm) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto doc = ib::fuzz::parse_json(ib::fuzz::as_text(data, size));
  if (!doc) return 0;
  ib::collectives::TuningTable table;
  try {
    table = ib::results::tuning_from_json(*doc, "fuzz.json");
  } catch (const ib::UsageError&) {
    return 0;
  }
  const nlohmann::json written = ib::results::to_json(table);
  const ib::collectives::TuningTable again =
      ib::results::tuning_from_json(written, "fuzz.json (rewritten)");
  IBSCOPE_FUZZ_CHECK(same(table, again));
  // Nothing narrowed on the way in: the counts read are the counts written in the file.
  for (std::size_t i = 0; i < table.entries.size(); ++i) {
    IBSCOPE_FUZZ_CHECK(written["entries"][i]["ranks"] == (*doc)["entries"][i]["ranks"]);
    IBSCOPE_FUZZ_CHECK(written["entries"][i]["hosts"] == (*doc)["entries"][i]["hosts"]);
  }
  for (const auto& entry : table.entries) {
    const auto c = ib::collective_named(entry.collective);
    IBSCOPE_FUZZ_CHECK(c.has_value());
    for (std::uint64_t bytes :
         {std::uint64_t{0}, std::uint64_t{4096}, std::uint64_t{1} << 40, UINT64_MAX}) {
      const auto chosen =
          ib::collectives::select_algorithm(table, *c, entry.ranks, entry.hosts, bytes);
      IBSCOPE_FUZZ_CHECK(chosen.has_value());
    }
  }
  return 0;
}
