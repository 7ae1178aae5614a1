#include "ibscope/measure/timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ibscope/core/error.hpp"

namespace ibscope::measure {

RowTiming combine_over_ranks(bootstrap::Bootstrap& bootstrap, const LoopTiming& mine,
                             TimeAverage average, std::string_view what) {
  const std::vector<std::vector<double>> loops =
      allgather_doubles(bootstrap, std::span(&mine.loop_s, 1), what);
  std::vector<double> loop_s;
  loop_s.reserve(loops.size());
  for (std::size_t r = 0; r < loops.size(); ++r) {
    if (loops[r].size() != 1) {
      throw RemoteError(fmt::format("{}: {} sent a malformed loop time", what,
                                    bootstrap.describe(static_cast<int>(r))));
    }
    loop_s.push_back(loops[r].front());
  }
  RowTiming t;
  t.time_s = combine_loop_times(loop_s, average);
  t.iteration_rank = slowest_rank(loop_s);
  const bool named = bootstrap.rank() == t.iteration_rank;
  auto samples = allgather_doubles(
      bootstrap, named ? std::span<const double>(mine.samples_s) : std::span<const double>(), what);
  t.samples_s = std::move(samples[static_cast<std::size_t>(t.iteration_rank)]);
  if (t.samples_s.size() != mine.samples_s.size()) {
    throw RemoteError(fmt::format("{}: {} reported {} samples, this rank has {}", what,
                                  bootstrap.describe(t.iteration_rank), t.samples_s.size(),
                                  mine.samples_s.size()));
  }
  return t;
}

std::vector<std::vector<double>> allgather_doubles(bootstrap::Bootstrap& bootstrap,
                                                   std::span<const double> mine,
                                                   std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(mine.data());
  const auto all = bootstrap.allgather(std::span(p, mine.size_bytes()), what);
  std::vector<std::vector<double>> out;
  out.reserve(all.size());
  for (const bootstrap::Bytes& b : all) {
    std::vector<double> v(b.size() / sizeof(double));
    if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(double));
    out.push_back(std::move(v));
  }
  return out;
}

std::uint64_t sum_over_ranks(bootstrap::Bootstrap& bootstrap, std::uint64_t value,
                             std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  const auto all = bootstrap.allgather(std::span(p, sizeof(value)), what);
  std::uint64_t total = 0;
  for (const bootstrap::Bytes& b : all) {
    if (b.size() != sizeof(value)) throw RemoteError(fmt::format("{}: malformed counter", what));
    std::uint64_t v;
    std::memcpy(&v, b.data(), sizeof(v));
    total += v;
  }
  return total;
}

}  // namespace ibscope::measure
