#include "ibscope/output/soak_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/core/units.hpp"

namespace ibscope::output {
namespace {

double mib(double bytes) { return bytes / (1 << 20); }

std::string signed_mib(std::int64_t bytes) {
  return fmt::format("{:+.1f}", mib(static_cast<double>(bytes)));
}

}  // namespace

void SoakTable::header() {
  fmt::print(out_,
             "#\n# {:>4} {:>8} {:>6} {:>8} {:>5} {:>10} {:>9} {:>10} {:>10} {:>11} {:>7} "
             "{:>13} {:>16}\n",
             "win", "end(s)", "algo", "type", "redop", "size(B)", "iters", "p50(us)", "p99(us)",
             "busbw(GB/s)", "#wrong", "rss_max(MiB)", "rss_growth(MiB)");
  std::fflush(out_);
}

void SoakTable::window(const measure::SoakWindow& w) {
  if (base_rss_.empty()) base_rss_ = w.rss_bytes;
  const std::uint64_t rss_max =
      w.rss_bytes.empty() ? 0 : *std::max_element(w.rss_bytes.begin(), w.rss_bytes.end());
  std::string growth = "warm-up";
  if (w.index > 0) {
    std::int64_t worst = INT64_MIN;
    for (std::size_t r = 0; r < w.rss_bytes.size() && r < base_rss_.size(); ++r) {
      worst = std::max(worst, static_cast<std::int64_t>(w.rss_bytes[r]) -
                                  static_cast<std::int64_t>(base_rss_[r]));
    }
    growth = worst == INT64_MIN ? "-" : signed_mib(worst);
  }
  for (const auto& c : w.cases) {
    fmt::print(out_,
               "  {:>4} {:>8.1f} {:>6} {:>8} {:>5} {:>10} {:>9} {:>10.2f} {:>10.2f} "
               "{:>11.3f} {:>7} {:>13.1f} {:>16}\n",
               w.index, w.end_s, c.algorithm, c.type, c.op, c.size_bytes, c.iterations,
               c.time_us.p50, c.time_us.p99, c.busbw_gbps, c.wrong,
               mib(static_cast<double>(rss_max)), growth);
  }
  std::fflush(out_);
}

void SoakTable::summary(const measure::SoakSummary& s, const measure::SoakThresholds& t) {
  fmt::print(out_,
             "#\n# Soak summary: {} windows; window 0 is warm-up; drift = last window / "
             "first steady window; trend = least-squares slope over the steady windows\n",
             s.windows);
  fmt::print(out_,
             "# {:>6} {:>8} {:>5} {:>10} {:>6} {:>13} {:>12} {:>9} {:>14} {:>17} {:>16} "
             "{:>11} {:>16}\n",
             "algo", "type", "redop", "size(B)", "win", "p50_first(us)", "p50_last(us)",
             "p50_ratio", "p50_trend(%/h)", "busbw_first(GB/s)", "busbw_last(GB/s)", "busbw_ratio",
             "busbw_trend(%/h)");
  for (const auto& c : s.cases) {
    fmt::print(out_,
               "  {:>6} {:>8} {:>5} {:>10} {:>6} {:>13.2f} {:>12.2f} {:>9.3f} {:>14.1f} "
               "{:>17.3f} {:>16.3f} {:>11.3f} {:>16.1f}\n",
               c.algorithm, c.type, c.op, c.size_bytes,
               fmt::format("{}-{}", c.first_window, c.last_window), c.first_p50_us, c.last_p50_us,
               c.p50_ratio, c.p50_trend_per_hour * 100, c.first_busbw_gbps, c.last_busbw_gbps,
               c.busbw_ratio, c.busbw_trend_per_hour * 100);
  }
  std::string growth;
  for (std::size_t r = 0; r < s.rss_growth_bytes.size(); ++r) {
    growth +=
        fmt::format("{}rank {} {} MiB", r == 0 ? "" : ", ", r, signed_mib(s.rss_growth_bytes[r]));
  }
  fmt::print(out_, "# RSS growth, window 0 to last (limit {}): {}\n",
             units::format_size(t.max_rss_growth_bytes), growth.empty() ? "n/a" : growth);
  fmt::print(out_, "# Wrong elements       : {}\n", s.wrong);
  fmt::print(out_, "# Max drift            : {}\n",
             t.max_drift > 0 ? fmt::format("{:g} % (judged)", t.max_drift * 100)
                             : std::string("report only"));
  for (const auto& r : s.reasons) fmt::print(out_, "# FAIL: {}\n", r);
  fmt::print(out_, "# Soak verdict         : {}\n#\n", s.pass ? "PASS" : "FAIL");
  std::fflush(out_);
}

}  // namespace ibscope::output
