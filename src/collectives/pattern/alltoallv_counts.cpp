#include "ibscope/collectives/pattern/alltoallv_counts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "ibscope/core/error.hpp"
#include "ibscope/core/splitmix64.hpp"

namespace ibscope::collectives {
namespace {

constexpr std::string_view kCountsGrammar =
    "uniform, zipf:S[:seed] (S >= 0 a number, seed an unsigned integer) or the path of a counts "
    "file";

[[noreturn]] void bad_generator(std::string_view text, std::string_view why) {
  throw UsageError(fmt::format("--counts {}: {}; expected {}", text, why, kCountsGrammar));
}

// The seeded popularity order of zipf: a Fisher-Yates shuffle driven by splitmix64, the same
// on every rank and build.
std::vector<int> zipf_popularity(int ranks, std::uint64_t seed) {
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng{seed};
  for (int i = ranks - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i) + 1));
    std::swap(order[static_cast<std::size_t>(i)], order[j]);
  }
  return order;
}

std::vector<double> generator_row(const CountsSpec& spec, int ranks) {
  std::vector<double> w(static_cast<std::size_t>(ranks), 1.0);
  if (spec.kind == CountsSpec::Kind::kZipf) {
    const std::vector<int> order = zipf_popularity(ranks, spec.seed);
    for (int k = 0; k < ranks; ++k) {
      w[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] =
          std::pow(static_cast<double>(k + 1), -spec.zipf_exponent);
    }
  }
  return w;
}

double max_over_mean(std::span<const std::size_t> v) {
  if (v.empty()) return 1;
  const double sum = std::accumulate(
      v.begin(), v.end(), 0.0, [](double a, std::size_t b) { return a + static_cast<double>(b); });
  if (sum == 0) return 1;
  return static_cast<double>(*std::max_element(v.begin(), v.end())) *
         static_cast<double>(v.size()) / sum;
}

}  // namespace

bool is_counts_generator(std::string_view text) noexcept {
  return text == "uniform" || text.starts_with("zipf:") || text == "zipf";
}

CountsSpec parse_counts_generator(std::string_view text) {
  CountsSpec spec;
  spec.text = std::string(text);
  if (text == "uniform") return spec;
  if (text == "zipf") bad_generator(text, "zipf needs its exponent S");
  if (!text.starts_with("zipf:")) bad_generator(text, "not a generator");
  spec.kind = CountsSpec::Kind::kZipf;
  std::string_view rest = text.substr(5);
  const auto colon = rest.find(':');
  const std::string exponent(rest.substr(0, colon));
  std::size_t used = 0;
  double s = -1;
  try {
    s = std::stod(exponent, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (exponent.empty() || used != exponent.size() || !std::isfinite(s) || s < 0 || s > 100) {
    bad_generator(text, fmt::format("exponent '{}' is not a number in [0, 100]", exponent));
  }
  spec.zipf_exponent = s;
  if (colon != std::string_view::npos) {
    const std::string_view seed = rest.substr(colon + 1);
    const auto [end, ec] = std::from_chars(seed.data(), seed.data() + seed.size(), spec.seed);
    if (seed.empty() || ec != std::errc{} || end != seed.data() + seed.size()) {
      bad_generator(text, fmt::format("seed '{}' is not an unsigned integer", seed));
    }
  }
  return spec;
}

std::vector<std::size_t> scale_to_total(std::span<const double> weights, std::size_t total) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::size_t> out(weights.size(), 0);
  if (weights.empty() || sum <= 0 || total == 0) return out;
  std::vector<double> rest(weights.size());
  std::size_t given = 0;
  const auto t = static_cast<double>(total);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double exact = weights[i] / sum * t;
    out[i] = std::min(total, static_cast<std::size_t>(std::floor(exact)));
    rest[i] = exact - static_cast<double>(out[i]);
    given += out[i];
  }
  // Rounding can leave the floors a little above the total; take back from the smallest
  // remainders first (never below zero).
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rest[a] > rest[b]; });
  for (std::size_t k = 0; given < total; k = (k + 1) % order.size()) {
    if (weights[order[k]] > 0) {
      ++out[order[k]];
      ++given;
    }
  }
  for (std::size_t k = order.size(); given > total && k-- > 0;) {
    if (out[order[k]] > 0) {
      --out[order[k]];
      --given;
    }
  }
  return out;
}

CountsMatrix::CountsMatrix(const CountsSpec& spec, int ranks, std::size_t mean_count)
    : ranks_(std::max(1, ranks)),
      shared_row_(spec.kind != CountsSpec::Kind::kMatrix),
      total_(mean_count * static_cast<std::size_t>(std::max(1, ranks))) {
  if (shared_row_) {
    rows_ = scale_to_total(generator_row(spec, ranks_), mean_count);
    return;
  }
  if (spec.matrix_ranks != ranks_) {
    throw UsageError(fmt::format(
        "--counts {}: the matrix has {} row(s), one per sender; this job has {} rank(s)", spec.text,
        spec.matrix_ranks, ranks_));
  }
  rows_ = scale_to_total(spec.weights, total_);
}

std::size_t CountsMatrix::at(int from, int to) const noexcept {
  return row(from)[static_cast<std::size_t>(to)];
}

std::span<const std::size_t> CountsMatrix::row(int from) const noexcept {
  const auto p = static_cast<std::size_t>(ranks_);
  const std::size_t first = shared_row_ ? 0 : static_cast<std::size_t>(from) * p;
  return std::span(rows_).subspan(first, p);
}

namespace {

// Sent and received elements per rank.
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> rank_totals(const CountsMatrix& m) {
  const auto p = static_cast<std::size_t>(m.ranks());
  std::vector<std::size_t> sent(p, 0), received(p, 0);
  for (int s = 0; s < m.ranks(); ++s) {
    const auto r = m.row(s);
    for (std::size_t d = 0; d < p; ++d) {
      sent[static_cast<std::size_t>(s)] += r[d];
      received[d] += r[d];
    }
  }
  return {sent, received};
}

}  // namespace

std::size_t CountsMatrix::max_rank_count() const {
  const auto [sent, received] = rank_totals(*this);
  return std::max(*std::max_element(sent.begin(), sent.end()),
                  *std::max_element(received.begin(), received.end()));
}

CountsImbalance CountsMatrix::imbalance() const {
  const auto [sent, received] = rank_totals(*this);
  CountsImbalance out;
  out.send_max_over_mean = max_over_mean(sent);
  out.recv_max_over_mean = max_over_mean(received);
  // With one shared row, every row has the row's ratio.
  out.pair_max_over_mean = max_over_mean(rows_);
  return out;
}

AlltoallvPlan make_alltoallv_plan(const CountsMatrix& m, int rank) {
  const auto p = static_cast<std::size_t>(m.ranks());
  AlltoallvPlan plan;
  plan.send_counts.assign(m.row(rank).begin(), m.row(rank).end());
  plan.send_offsets.resize(p);
  plan.recv_counts.resize(p);
  plan.recv_offsets.resize(p);
  plan.source_offsets.resize(p);
  const auto me = static_cast<std::size_t>(rank);
  // A generator's rows are one row: its prefix is summed once.
  const std::size_t* summed_row = nullptr;
  std::size_t prefix = 0;
  for (std::size_t q = 0; q < p; ++q) {
    plan.send_offsets[q] = plan.send_total;
    plan.send_total += plan.send_counts[q];
    const auto r = m.row(static_cast<int>(q));
    plan.recv_counts[q] = r[me];
    plan.recv_offsets[q] = plan.recv_total;
    plan.recv_total += r[me];
    if (r.data() != summed_row) {
      prefix =
          std::accumulate(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(me), std::size_t{0});
      summed_row = r.data();
    }
    plan.source_offsets[q] = prefix;
  }
  return plan;
}

}  // namespace ibscope::collectives
