// The results file loader (results/loader.hpp) that fit, predict, report, run, validate and
// export-prometheus read files with. Expected rejection: UsageError naming the file and field.
// Property: an accepted file, written out from its typed Document and read again, is accepted
// again and gives the same document.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_support.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/loader.hpp"
#include "results/document_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace results = ibscope::results;
  std::optional<results::Document> doc;
  try {
    doc = results::parse(ibscope::fuzz::as_text(data, size), "fuzz.json");
  } catch (const ibscope::UsageError&) {
    return 0;
  }
  const std::string written = results::to_json(*doc).dump();
  const results::Document again = results::parse(written, "fuzz.json (rewritten)");
  IBSCOPE_FUZZ_CHECK(results::to_json(again).dump() == written);
  return 0;
}
