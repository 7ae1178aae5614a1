#include "ibscope/measure/timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ibscope/core/error.hpp"

namespace ibscope {

std::vector<double> max_over_ranks(Bootstrap& bootstrap, std::span<const double> samples,
                                   std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(samples.data());
  const auto all = bootstrap.allgather(std::span(p, samples.size_bytes()), what);
  std::vector<double> out(samples.begin(), samples.end());
  for (int r = 0; r < bootstrap.size(); ++r) {
    const Bytes& b = all[static_cast<std::size_t>(r)];
    if (b.size() != samples.size_bytes()) {
      throw RemoteError(fmt::format("{}: {} reported {} samples, this rank has {}", what,
                                    bootstrap.describe(r), b.size() / sizeof(double),
                                    samples.size()));
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      double v;
      std::memcpy(&v, b.data() + i * sizeof(double), sizeof(double));
      out[i] = std::max(out[i], v);
    }
  }
  return out;
}

std::vector<std::vector<double>> allgather_doubles(Bootstrap& bootstrap,
                                                   std::span<const double> mine,
                                                   std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(mine.data());
  const auto all = bootstrap.allgather(std::span(p, mine.size_bytes()), what);
  std::vector<std::vector<double>> out;
  out.reserve(all.size());
  for (const Bytes& b : all) {
    std::vector<double> v(b.size() / sizeof(double));
    if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(double));
    out.push_back(std::move(v));
  }
  return out;
}

std::uint64_t sum_over_ranks(Bootstrap& bootstrap, std::uint64_t value, std::string_view what) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  const auto all = bootstrap.allgather(std::span(p, sizeof(value)), what);
  std::uint64_t total = 0;
  for (const Bytes& b : all) {
    if (b.size() != sizeof(value)) throw RemoteError(fmt::format("{}: malformed counter", what));
    std::uint64_t v;
    std::memcpy(&v, b.data(), sizeof(v));
    total += v;
  }
  return total;
}

}  // namespace ibscope
