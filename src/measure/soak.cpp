#include "ibscope/measure/soak.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"

namespace ibscope::measure {

namespace {

constexpr double kHistogramMinUs = 0.01;
constexpr int kBinsPerDecade = 200;
constexpr int kDecades = 11;                                  // 0.01 us .. 1e9 us (17 minutes)
constexpr std::size_t kBins = kBinsPerDecade * kDecades + 2;  // + underflow and overflow

}  // namespace

TimeHistogram::TimeHistogram() : bins_(kBins, 0) {}

std::size_t TimeHistogram::bin_of(double us) const noexcept {
  if (!(us >= kHistogramMinUs)) return 0;
  const double pos = std::log10(us / kHistogramMinUs) * kBinsPerDecade;
  return std::min(kBins - 1, static_cast<std::size_t>(pos) + 1);
}

double TimeHistogram::bin_value(std::size_t bin) const noexcept {
  if (bin == 0) return min_;
  if (bin == kBins - 1) return max_;
  // The geometric middle of the bin.
  return kHistogramMinUs * std::pow(10.0, (static_cast<double>(bin) - 0.5) / kBinsPerDecade);
}

void TimeHistogram::add(double us) noexcept {
  if (n_ == 0 || us < min_) min_ = us;
  if (n_ == 0 || us > max_) max_ = us;
  ++n_;
  sum_ += us;
  sum_sq_ += us * us;
  ++bins_[bin_of(us)];
}

void TimeHistogram::clear() noexcept {
  std::fill(bins_.begin(), bins_.end(), 0);
  n_ = 0;
  min_ = max_ = sum_ = sum_sq_ = 0;
}

double TimeHistogram::percentile(double q) const noexcept {
  if (n_ == 0) return 0;
  // The order statistic nearest to where summarize() interpolates (type 7): q/100 x (n - 1).
  const auto target =
      static_cast<std::uint64_t>(std::llround(q / 100 * static_cast<double>(n_ - 1)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < bins_.size(); ++b) {
    seen += bins_[b];
    if (seen > target) return std::clamp(bin_value(b), min_, max_);
  }
  return max_;
}

Stats TimeHistogram::stats() const {
  Stats s;
  s.n = n_;
  if (n_ == 0) return s;
  const double n = static_cast<double>(n_);
  s.min = min_;
  s.max = max_;
  s.mean = sum_ / n;
  s.sd = n_ > 1 ? std::sqrt(std::max(0.0, (sum_sq_ - n * s.mean * s.mean) / (n - 1))) : 0;
  s.p50 = percentile(50);
  s.p99 = percentile(99);
  s.p99_9 = percentile(99.9);
  return s;
}

SoakCaseWindow make_case_window(std::string algorithm, std::string type, std::string op,
                                std::uint64_t size_bytes, const TimeHistogram& times_us,
                                double busbw_factor, std::uint64_t wrong) {
  SoakCaseWindow w;
  w.algorithm = std::move(algorithm);
  w.type = std::move(type);
  w.op = std::move(op);
  w.size_bytes = size_bytes;
  w.iterations = times_us.count();
  w.time_us = times_us.stats();
  w.algbw_gbps = units::to_gb_per_s(static_cast<double>(size_bytes), w.time_us.mean * 1e-6);
  w.busbw_gbps = w.algbw_gbps * busbw_factor;
  w.wrong = wrong;
  return w;
}

double least_squares_slope(std::span<const double> x, std::span<const double> y) noexcept {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

namespace {

double ratio(double last, double first) { return first > 0 ? last / first : 1; }

// Slope per hour relative to `base`.
double relative_trend(const std::vector<double>& hours, const std::vector<double>& values,
                      double base) {
  return base > 0 ? least_squares_slope(hours, values) / base : 0;
}

}  // namespace

SoakSummary summarize_soak(std::span<const SoakWindow> windows, const SoakThresholds& t) {
  SoakSummary s;
  s.windows = static_cast<int>(windows.size());
  if (windows.size() < 2) {
    // A batch can run far past its window when the host slows down under it (batches are sized
    // from the rate before): a 4 s soak of 1 s windows closed a single window under load, and
    // with nothing to compare window 0 with it judged neither RSS nor drift, and passed.
    s.reasons.push_back(fmt::format(
        "only {} window{} closed (window 0 is warm-up): RSS growth and drift need a later window "
        "to compare with it; the iterations ran far slower than when their batch was sized (a "
        "busy host?), use a longer --duration or --window",
        windows.size(), windows.size() == 1 ? "" : "s"));
  }
  if (windows.empty()) {
    s.pass = false;
    return s;
  }
  s.steady_windows = s.windows - 1;
  for (const auto& w : windows) {
    for (const auto& c : w.cases) s.wrong += c.wrong;
  }
  const std::size_t first = windows.size() >= 2 ? 1 : 0;
  const SoakWindow& first_w = windows[first];
  const SoakWindow& last_w = windows.back();
  for (std::size_t ci = 0; ci < first_w.cases.size() && ci < last_w.cases.size(); ++ci) {
    const SoakCaseWindow& a = first_w.cases[ci];
    const SoakCaseWindow& b = last_w.cases[ci];
    SoakCaseDrift d;
    d.algorithm = a.algorithm;
    d.type = a.type;
    d.op = a.op;
    d.size_bytes = a.size_bytes;
    d.first_window = first_w.index;
    d.last_window = last_w.index;
    d.first_p50_us = a.time_us.p50;
    d.last_p50_us = b.time_us.p50;
    d.p50_ratio = ratio(d.last_p50_us, d.first_p50_us);
    d.first_busbw_gbps = a.busbw_gbps;
    d.last_busbw_gbps = b.busbw_gbps;
    d.busbw_ratio = ratio(d.last_busbw_gbps, d.first_busbw_gbps);
    std::vector<double> hours, p50, busbw;
    for (std::size_t wi = first; wi < windows.size(); ++wi) {
      if (ci >= windows[wi].cases.size() || windows[wi].cases[ci].iterations == 0) continue;
      hours.push_back((windows[wi].start_s + windows[wi].end_s) / 2 / 3600);
      p50.push_back(windows[wi].cases[ci].time_us.p50);
      busbw.push_back(windows[wi].cases[ci].busbw_gbps);
    }
    d.p50_trend_per_hour = relative_trend(hours, p50, d.first_p50_us);
    d.busbw_trend_per_hour = relative_trend(hours, busbw, d.first_busbw_gbps);
    if (t.max_drift > 0) {
      const std::string what =
          fmt::format("{} {} {} {}", d.algorithm, d.type, d.op, units::format_size(d.size_bytes));
      if (d.p50_ratio > 1 + t.max_drift) {
        s.reasons.push_back(fmt::format(
            "{}: p50 time drifted from {:.1f} us (window {}) to {:.1f} us (window {}), x{:.2f} > "
            "--max-drift {:.0f} %",
            what, d.first_p50_us, d.first_window, d.last_p50_us, d.last_window, d.p50_ratio,
            t.max_drift * 100));
      }
      if (d.first_busbw_gbps > 0 && d.busbw_ratio < 1 / (1 + t.max_drift)) {
        s.reasons.push_back(fmt::format(
            "{}: busbw drifted from {:.3f} GB/s (window {}) to {:.3f} GB/s (window {}), x{:.2f} "
            "< 1/(1 + --max-drift {:.0f} %)",
            what, d.first_busbw_gbps, d.first_window, d.last_busbw_gbps, d.last_window,
            d.busbw_ratio, t.max_drift * 100));
      }
    }
    s.cases.push_back(std::move(d));
  }
  if (windows.size() >= 2) {
    const auto& base = windows.front().rss_bytes;
    const auto& end = last_w.rss_bytes;
    for (std::size_t r = 0; r < base.size() && r < end.size(); ++r) {
      const auto growth = static_cast<std::int64_t>(end[r]) - static_cast<std::int64_t>(base[r]);
      s.rss_growth_bytes.push_back(growth);
      if (growth > static_cast<std::int64_t>(t.max_rss_growth_bytes)) {
        s.reasons.push_back(fmt::format(
            "RSS of rank {} grew by {:.1f} MiB from window 0 to window {} ({:.1f} -> {:.1f} MiB), "
            "more than --max-rss-growth {}",
            r, static_cast<double>(growth) / (1 << 20), last_w.index,
            static_cast<double>(base[r]) / (1 << 20), static_cast<double>(end[r]) / (1 << 20),
            units::format_size(t.max_rss_growth_bytes)));
      }
    }
  }
  if (s.wrong > 0) {
    s.reasons.insert(s.reasons.begin(),
                     fmt::format("{} wrong elements in total (see #wrong per window)", s.wrong));
  }
  s.pass = s.reasons.empty();
  return s;
}

double default_soak_window_s(double duration_s) noexcept {
  return std::min(std::max(30.0, duration_s / 20), duration_s / 2);
}

void check_soak_times(double duration_s, double window_s) {
  if (window_s > duration_s) {
    throw UsageError(
        fmt::format("--window {:g} s is longer than --duration {:g} s", window_s, duration_s));
  }
  if (window_s * 2 > duration_s) {
    throw UsageError(fmt::format(
        "--window {:g} s: a soak of {:g} s needs at least two windows (window 0 is warm-up, the "
        "drift and RSS growth compare the later ones against it); use --window {:g} or less",
        window_s, duration_s, duration_s / 2));
  }
}

}  // namespace ibscope::measure
