#include "ibscope/measure/sweep.hpp"

#include <fmt/format.h>

#include <cmath>

#include "ibscope/core/error.hpp"

namespace ibscope::measure {

std::vector<std::uint64_t> sweep_sizes(const SweepSpec& s, std::uint64_t element_bytes) {
  constexpr std::size_t kMaxSizes = 10000;
  if (!s.explicit_bytes.empty()) {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t b : s.explicit_bytes) {
      sizes.push_back(element_bytes > 0 ? b / element_bytes * element_bytes : b);
    }
    return sizes;
  }
  if (s.min_bytes > s.max_bytes) {
    throw UsageError(fmt::format("inverted sweep: -b/--minbytes {} is larger than -e/--maxbytes {}",
                                 s.min_bytes, s.max_bytes));
  }
  if (s.step_bytes == 0 && !(s.factor > 1.0)) {
    throw UsageError(
        fmt::format("-f/--stepfactor {} must be > 1 (or give -i/--stepbytes)", s.factor));
  }
  std::vector<std::uint64_t> sizes;
  double size = static_cast<double>(s.min_bytes);
  while (size <= static_cast<double>(s.max_bytes)) {
    const auto bytes = static_cast<std::uint64_t>(size);
    const std::uint64_t rounded = element_bytes > 0 ? bytes / element_bytes * element_bytes : bytes;
    if (sizes.empty() || sizes.back() != rounded) sizes.push_back(rounded);
    if (sizes.size() > kMaxSizes) {
      throw UsageError(fmt::format("sweep {}..{} has more than {} sizes: raise -f or -i",
                                   s.min_bytes, s.max_bytes, kMaxSizes));
    }
    // Never stall on tiny sizes: at least one byte of progress.
    const double next = s.step_bytes != 0 ? size + static_cast<double>(s.step_bytes)
                                          : std::max(size * s.factor, size + 1);
    if (!(next > size)) {
      // Above 2^53 bytes a double no longer changes by a small step: the loop would never end.
      throw UsageError(
          fmt::format("sweep {}..{}: a step of {} does not change a size this "
                      "large; raise -f or -i",
                      s.min_bytes, s.max_bytes,
                      s.step_bytes != 0 ? fmt::format("{} bytes", s.step_bytes)
                                        : fmt::format("factor {}", s.factor)));
    }
    size = next;
  }
  return sizes;
}

}  // namespace ibscope::measure
