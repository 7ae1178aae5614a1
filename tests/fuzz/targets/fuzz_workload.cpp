// The workload file of `ibscope model`/`predict`/`run` (model/workload.hpp), then the
// transformer figures the step model derives from an accepted workload
// (model/transformer.hpp). Expected rejection: UsageError naming the field. Properties: an
// accepted workload written out (workload_json_text) is accepted again and writes out the same; its
// derived figures are finite and not negative.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/model/transformer.hpp"
#include "ibscope/model/workload.hpp"

namespace model = ibscope::model;

namespace {

bool sane(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  model::Workload w;
  try {
    w = model::workload_from_text(ibscope::fuzz::as_text(data, size), "fuzz.json");
  } catch (const ibscope::UsageError&) {
    return 0;
  }
  const std::string written = model::workload_json_text(w);
  const model::Workload again = model::workload_from_text(written, "fuzz.json (rewritten)");
  IBSCOPE_FUZZ_CHECK(model::workload_json_text(again) == written);
  IBSCOPE_FUZZ_CHECK(w.gpus() > 0 && w.nodes() > 0 && w.microbatches() > 0);
  IBSCOPE_FUZZ_CHECK(sane(model::parameters(w)));
  IBSCOPE_FUZZ_CHECK(sane(model::parameters_per_gpu(w)));
  IBSCOPE_FUZZ_CHECK(sane(model::bubble_fraction(w)));
  IBSCOPE_FUZZ_CHECK(sane(model::tp_message_bytes(w)));
  IBSCOPE_FUZZ_CHECK(sane(model::pp_message_bytes(w)));
  IBSCOPE_FUZZ_CHECK(sane(model::dp_gradient_bytes(w)));
  (void)model::training_flops(w, w.micro_batch);
  return 0;
}
