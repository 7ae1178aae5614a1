// The results file loader (output/results_loader.hpp) that fit, predict, report, run and
// export-prometheus read files with. Expected rejection: UsageError naming the file and field.
// Property: an accepted file, written out and read again, is accepted again.

#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/output/results_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json doc;
  try {
    doc = ibscope::parse_results(ibscope::fuzz::as_text(data, size), "fuzz.json");
  } catch (const ibscope::UsageError&) {
    return 0;
  }
  ibscope::validate_results(nlohmann::json::parse(doc.dump()), "fuzz.json (rewritten)");
  return 0;
}
