// The baseline file reader (results/baseline.hpp parse_baseline, as `accept --baseline` and the
// shipped references use it). Expected rejection: UsageError. Properties: an accepted baseline
// writes back to text that parses to the same text again (nothing lost or invented), its
// statistics are in order, and a reference holds no measurements.

#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"

namespace ib = ibscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ib::results::Baseline b;
  try {
    b = ib::results::parse_baseline(ib::fuzz::as_text(data, size), "fuzz.json");
  } catch (const ib::UsageError&) {
    return 0;
  }
  const std::string written = ib::results::baseline_to_text(b);
  const ib::results::Baseline again = ib::results::parse_baseline(written, "fuzz.json (rewritten)");
  IBSCOPE_FUZZ_CHECK(ib::results::baseline_to_text(again) == written);
  for (const auto& l : b.links) {
    IBSCOPE_FUZZ_CHECK(l.bw_gbps.n > 0);
    IBSCOPE_FUZZ_CHECK(l.bw_gbps.min <= l.bw_gbps.median && l.bw_gbps.median <= l.bw_gbps.max);
  }
  if (b.kind == ib::results::BaselineKind::kReference) {
    IBSCOPE_FUZZ_CHECK(b.links.empty() && b.rows.empty() && b.runs.empty());
    IBSCOPE_FUZZ_CHECK(!b.references.empty());
  }
  return 0;
}
