// Baseline files (results/baseline.hpp): read and checked, written atomically and never over
// another file; the references shipped with ibscope (compiled in) and the one matching a run.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"

namespace ibscope::results {

Baseline load_baseline(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(
        fmt::format("{}: cannot open baseline file: {}", path.string(), std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_baseline(text.str(), path.string());
}

void write_baseline(const Baseline& baseline, const std::filesystem::path& path) {
  write_file_exclusive(path, baseline_to_text(baseline));
}

std::vector<Baseline> shipped_references() {
  std::vector<Baseline> out;
  for (const ShippedReference& f : shipped_reference_texts()) {
    try {
      out.push_back(parse_baseline(f.text, f.name));
    } catch (const UsageError& e) {
      throw Error(ErrorKind::kSystem,
                  fmt::format("the shipped reference baseline is broken: {}", e.what()));
    }
  }
  return out;
}

const Baseline* match_reference(const std::vector<Baseline>& references,
                                const HardwareSignature& hardware) noexcept {
  for (const Baseline& r : references) {
    const HardwareSignature& h = r.hardware;
    if (r.kind == BaselineKind::kReference && h.nic_model == hardware.nic_model &&
        h.port_speed == hardware.port_speed && h.link_rate_gbit == hardware.link_rate_gbit &&
        h.link_layer == hardware.link_layer) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace ibscope::results
