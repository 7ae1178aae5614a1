#include "ibscope/measure/timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "ibscope/core/error.hpp"

namespace ibscope::measure {

RowTiming combine_over_ranks(bootstrap::Bootstrap& bootstrap, const LoopTiming& mine,
                             TimeAverage average, std::string_view what) {
  // Rank 0 combines every rank's loop and outside time and tells every rank the result (16 bytes
  // each), then the named rank's samples go to rank 0 only: O(n) bytes at the root per row.
  const std::array<double, 2> loop{mine.loop_s, mine.outside_s};
  const std::vector<std::vector<double>> loops = gather_doubles(bootstrap, loop, what);
  std::array<double, 2> decided{0, 0};  // time, iteration rank
  if (bootstrap.rank() == 0) {
    std::vector<double> loop_s, outside_s;
    loop_s.reserve(loops.size());
    outside_s.reserve(loops.size());
    for (std::size_t r = 0; r < loops.size(); ++r) {
      if (loops[r].size() != loop.size()) {
        throw RemoteError(fmt::format("{}: {} sent a malformed loop time", what,
                                      bootstrap.describe(static_cast<int>(r))));
      }
      loop_s.push_back(loops[r][0]);
      outside_s.push_back(loops[r][1]);
    }
    decided = {combine_loop_times(loop_s, average),
               static_cast<double>(waited_for_rank(loop_s, outside_s))};
  }
  const bootstrap::Bytes told = bootstrap.broadcast(
      std::span(reinterpret_cast<const std::byte*>(decided.data()), sizeof(decided)), what);
  if (told.size() != sizeof(decided)) throw RemoteError(fmt::format("{}: malformed timing", what));
  std::memcpy(decided.data(), told.data(), sizeof(decided));
  RowTiming t;
  t.time_s = decided[0];
  t.iteration_rank = static_cast<int>(decided[1]);
  const bool named = bootstrap.rank() == t.iteration_rank;
  auto samples = gather_doubles(
      bootstrap, named ? std::span<const double>(mine.samples_s) : std::span<const double>(), what);
  if (bootstrap.rank() != 0) return t;  // the samples are rank 0's, which writes the results
  t.samples_s = std::move(samples.at(static_cast<std::size_t>(t.iteration_rank)));
  if (t.samples_s.size() != mine.samples_s.size()) {
    throw RemoteError(fmt::format("{}: {} reported {} samples, this rank has {}", what,
                                  bootstrap.describe(t.iteration_rank), t.samples_s.size(),
                                  mine.samples_s.size()));
  }
  return t;
}

namespace {

std::vector<std::vector<double>> to_doubles(const std::vector<bootstrap::Bytes>& all) {
  std::vector<std::vector<double>> out;
  out.reserve(all.size());
  for (const bootstrap::Bytes& b : all) {
    std::vector<double> v(b.size() / sizeof(double));
    if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(double));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

std::vector<std::vector<double>> gather_doubles(bootstrap::Bootstrap& bootstrap,
                                                std::span<const double> mine,
                                                std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(mine.data());
  return to_doubles(bootstrap.gather(std::span(p, mine.size_bytes()), what));
}

std::uint64_t sum_over_ranks(bootstrap::Bootstrap& bootstrap, std::uint64_t value,
                             std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  const auto all = bootstrap.gather(std::span(p, sizeof(value)), what);
  std::uint64_t total = 0;
  for (const bootstrap::Bytes& b : all) {  // rank 0 only
    if (b.size() != sizeof(value)) throw RemoteError(fmt::format("{}: malformed counter", what));
    std::uint64_t v;
    std::memcpy(&v, b.data(), sizeof(v));
    total += v;
  }
  const bootstrap::Bytes told = bootstrap.broadcast(
      std::span(reinterpret_cast<const std::byte*>(&total), sizeof(total)), what);
  if (told.size() != sizeof(total)) throw RemoteError(fmt::format("{}: malformed sum", what));
  std::memcpy(&total, told.data(), sizeof(total));
  return total;
}

}  // namespace ibscope::measure
