// nccl-tests' stdout as `fit`, `predict`, `model`, `report` and `compare` read it
// (results/nccl_tests.hpp), and its JSON output when the input has "nccl_version". Expected
// rejection: NcclTestsParseError, whose line and column lie inside the input (or one past its
// end); UsageError for the JSON. Properties: every accepted row has a finite,
// non-negative time and bandwidths, and the document built from the runs has no more rows than
// the runs.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "ibscope/results/nccl_tests.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace results = ibscope::results;
  const std::string_view text = ibscope::fuzz::as_text(data, size);
  results::NcclTestsOutput out;
  if (results::looks_like_nccl_tests_json(text)) {  // its -J output: errors name a JSON path
    try {
      out = results::parse_nccl_tests_json(text, "fuzz.json");
    } catch (const ibscope::UsageError&) {
      return 0;
    }
    IBSCOPE_FUZZ_CHECK(results::to_document(out, "fuzz.json").collectives.rows.size() <=
                       out.runs.at(0).rows.size());
    return 0;
  }
  try {
    out = results::parse_nccl_tests(text, "fuzz.txt");
  } catch (const results::NcclTestsParseError& e) {
    std::size_t lines = 1;
    for (const char c : text) lines += c == '\n' ? 1 : 0;
    IBSCOPE_FUZZ_CHECK(e.line() >= 1 && static_cast<std::size_t>(e.line()) <= lines + 1);
    IBSCOPE_FUZZ_CHECK(e.column() >= 1 && static_cast<std::size_t>(e.column()) <= size + 1);
    return 0;
  }
  std::size_t rows = 0;
  for (const auto& run : out.runs) {
    IBSCOPE_FUZZ_CHECK(run.rank_count() >= 1);
    for (const auto& r : run.rows) {
      IBSCOPE_FUZZ_CHECK(std::isfinite(r.time_us) && r.time_us >= 0);
      IBSCOPE_FUZZ_CHECK(std::isfinite(r.algbw_gbps) && std::isfinite(r.busbw_gbps));
      ++rows;
    }
  }
  const results::Document doc = results::to_document(out, "fuzz.txt");
  IBSCOPE_FUZZ_CHECK(doc.collectives.rows.size() <= rows);
  return 0;
}
