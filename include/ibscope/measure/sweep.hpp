#pragma once
/// Message-size sweeps as nccl-tests defines them: -b min, -e max, then either -f factor
/// (multiply) or -i increment (add), or an explicit list (--sizes). Sizes are rounded down to
/// whole elements.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibscope::measure {

/// Told before each step of a sweep: what it measures next ("allreduce ring 4 MiB"), how many
/// steps are done and how many there are in all. Progress display only (output/progress_line).
using SweepProgress =
    std::function<void(const std::string& what, std::size_t done, std::size_t total)>;

struct SweepSpec {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 128ULL << 20;
  double factor = 2;                          ///< used when step_bytes == 0
  std::uint64_t step_bytes = 0;               ///< -i: linear increment
  std::vector<std::uint64_t> explicit_bytes;  ///< --sizes: these sizes instead of a range
};

/// Throws UsageError on an inverted range, factor <= 1 without an increment, a sweep of more
/// than 10000 sizes, or a step too small to change a size (near 2^53 bytes and above).
std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec, std::uint64_t element_bytes);

}  // namespace ibscope::measure
