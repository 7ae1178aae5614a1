// Cost of verification on host memory: filling one rank's input, poisoning an output and
// counting the wrong elements of a correct result, per type, for p ranks and one buffer size.
// Uses only the VerifiablePattern calls that the first pattern (periodic, before issue 21)
// had too, so the same source measures both (docs/methodology.md has the figures and how).
//
//   ibscope_bench_verify [size (default 256M)] [ranks (default 8)] [repeats (default 5)]

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/collectives/harness/verify.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/reduce.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::size_t parse_size(const char* text) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  const std::string unit(end);
  if (unit == "K") v *= 1024;
  if (unit == "M") v *= 1024 * 1024;
  if (unit == "G") v *= 1024.0 * 1024 * 1024;
  return static_cast<std::size_t>(v);
}

// Best and median of `repeats` runs of fn, in seconds.
template <typename Fn>
std::pair<double, double> time_it(int repeats, Fn&& fn) {
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    fn();
    s.push_back(seconds_since(t0));
  }
  std::sort(s.begin(), s.end());
  return {s.front(), s[s.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = argc > 1 ? parse_size(argv[1]) : std::size_t{256} << 20;
  const int ranks = argc > 2 ? std::atoi(argv[2]) : 8;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  fmt::print("# verification cost: {} B per buffer, p = {}, best/median of {} runs, one core\n",
             bytes, ranks, repeats);
  fmt::print("# columns: best/median ms (GB/s at best, 1e9 B/s)\n");
  fmt::print("{:<9} {:<4} {:>10} {:>20} {:>20} {:>20} {:>8}\n", "type", "op", "build(ms)",
             "fill_input", "fill_poison", "count_wrong", "#wrong");
  for (const ibscope::DataType t : {ibscope::DataType::kFloat32, ibscope::DataType::kBFloat16}) {
    for (const ibscope::ReduceOp op : {ibscope::ReduceOp::kSum, ibscope::ReduceOp::kMax}) {
      const std::size_t count = bytes / ibscope::size_of(t);
      auto t0 = Clock::now();
      const ibscope::collectives::VerifiablePattern pattern(t, op, ranks);
      const double build_s = seconds_since(t0);
      // Pages touched once before timing, as the harness's buffers are.
      auto a = std::make_unique<std::byte[]>(bytes);
      auto b = std::make_unique<std::byte[]>(bytes);
      std::fill_n(a.get(), bytes, std::byte{0});
      std::fill_n(b.get(), bytes, std::byte{0});
      // The correct result, reduced rank by rank from the inputs (untimed).
      pattern.fill_input(0, a.get(), count);
      for (int r = 1; r < ranks; ++r) {
        pattern.fill_input(r, b.get(), count);
        ibscope::reduce(t, op, a.get(), a.get(), b.get(), count);
      }
      const auto fill = time_it(repeats, [&] { pattern.fill_input(ranks / 2, b.get(), count); });
      const auto poison = time_it(repeats, [&] { pattern.fill_poison(b.get(), count); });
      std::size_t wrong = 0;
      const auto check = time_it(repeats, [&] { wrong = pattern.count_wrong(a.get(), count); });
      auto col = [&](std::pair<double, double> s) {
        return fmt::format("{:.0f}/{:.0f} ({:.1f})", s.first * 1e3, s.second * 1e3,
                           static_cast<double>(bytes) / s.first / 1e9);
      };
      fmt::print("{:<9} {:<4} {:>10.1f} {:>20} {:>20} {:>20} {:>8}\n", ibscope::name_of(t),
                 ibscope::name_of(op), build_s * 1e3, col(fill), col(poison), col(check), wrong);
    }
  }
  return 0;
}
