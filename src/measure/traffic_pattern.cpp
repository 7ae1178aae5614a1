#include "ibscope/measure/traffic_pattern.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "ibscope/core/error.hpp"

namespace ibscope::measure {
namespace {

constexpr std::string_view kPatternSpellings = "pairs, incast:K, one-to-many:K or bisection";

// A non-negative integer, all of `text`; nullopt otherwise.
std::optional<int> pattern_whole_number(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

int pattern_hub_count(const HubSelection& hubs, int units) {
  switch (hubs.mode) {
    case HubSelection::Mode::kAll:
      return units;
    case HubSelection::Mode::kSample:
      return hubs.sample;
    case HubSelection::Mode::kList:
      return static_cast<int>(hubs.list.size());
  }
  return 0;
}

}  // namespace

TrafficPattern parse_traffic_pattern(std::string_view text) {
  if (text == "pairs") return {};
  if (text == "bisection") return {PatternKind::kBisection, 0};
  for (const auto& [prefix, kind] :
       {std::pair{std::string_view("incast:"), PatternKind::kIncast},
        std::pair{std::string_view("one-to-many:"), PatternKind::kOneToMany}}) {
    if (!text.starts_with(prefix)) continue;
    const auto k = pattern_whole_number(text.substr(prefix.size()));
    if (!k || *k < 1) {
      throw UsageError(
          fmt::format("--pattern {}: K must be a whole number >= 1 ({}K)", text, prefix));
    }
    return {kind, *k};
  }
  throw UsageError(fmt::format("--pattern '{}': expected {}", text, kPatternSpellings));
}

std::string to_string(const TrafficPattern& p) {
  switch (p.kind) {
    case PatternKind::kPairs:
      return "pairs";
    case PatternKind::kIncast:
      return fmt::format("incast:{}", p.k);
    case PatternKind::kOneToMany:
      return fmt::format("one-to-many:{}", p.k);
    case PatternKind::kBisection:
      return "bisection";
  }
  return "?";
}

HubSelection parse_hub_selection(std::string_view text) {
  HubSelection h;
  if (text == "all") return h;
  if (text.starts_with("sample:")) {
    const auto n = pattern_whole_number(text.substr(7));
    if (!n || *n < 1) {
      throw UsageError(fmt::format("--pattern-hubs {}: sample:N needs N >= 1", text));
    }
    h.mode = HubSelection::Mode::kSample;
    h.sample = *n;
    return h;
  }
  h.mode = HubSelection::Mode::kList;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const auto unit = pattern_whole_number(rest.substr(0, comma));
    if (!unit) {
      throw UsageError(fmt::format(
          "--pattern-hubs '{}': expected all, sample:N or a list of hubs such as 0,3", text));
    }
    h.list.push_back(*unit);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return h;
}

void validate_pattern(const TrafficPattern& p, const HubSelection& hubs, int units,
                      std::string_view unit_name) {
  switch (p.kind) {
    case PatternKind::kPairs:
      return;
    case PatternKind::kBisection:
      if (units < 2) {
        throw UsageError(
            fmt::format("--pattern bisection: needs 2 {} or more (have {})", unit_name, units));
      }
      return;
    case PatternKind::kIncast:
    case PatternKind::kOneToMany:
      break;
  }
  if (p.k < 1 || p.k >= units) {
    throw UsageError(fmt::format(
        "--pattern {}: K must be 1..{} (a hub and K others among the {} {} of this job)",
        to_string(p), units - 1, units, unit_name));
  }
  if (hubs.mode == HubSelection::Mode::kSample && hubs.sample > units) {
    throw UsageError(fmt::format("--pattern-hubs sample:{}: more hubs than the {} {}", hubs.sample,
                                 units, unit_name));
  }
  for (const int h : hubs.list) {
    if (h >= units) {
      throw UsageError(fmt::format("--pattern-hubs: hub {} is not one of the {} {} (0..{})", h,
                                   units, unit_name, units - 1));
    }
  }
}

int pattern_round_count(const TrafficPattern& p, const HubSelection& hubs, int units) {
  switch (p.kind) {
    case PatternKind::kPairs:
      return 0;
    case PatternKind::kBisection:
      return units >= 2 ? 1 : 0;
    case PatternKind::kIncast:
    case PatternKind::kOneToMany:
      return pattern_hub_count(hubs, units);
  }
  return 0;
}

int pattern_hub(const TrafficPattern& p, const HubSelection& hubs, int units, int r) {
  if (p.kind != PatternKind::kIncast && p.kind != PatternKind::kOneToMany) return -1;
  switch (hubs.mode) {
    case HubSelection::Mode::kAll:
      return r;
    case HubSelection::Mode::kSample:
      // Spread evenly: hub i of N is floor(i * units / N), distinct since N <= units.
      return static_cast<int>(static_cast<std::int64_t>(r) * units / hubs.sample);
    case HubSelection::Mode::kList:
      return hubs.list.at(static_cast<std::size_t>(r));
  }
  return -1;
}

std::vector<Flow> pattern_round(const TrafficPattern& p, const HubSelection& hubs, int units,
                                int r) {
  std::vector<Flow> flows;
  if (p.kind == PatternKind::kBisection) {
    const int half = units / 2;
    for (int i = 0; i < half; ++i) {
      flows.push_back({i, i + half});
      flows.push_back({i + half, i});
    }
    return flows;
  }
  const int hub = pattern_hub(p, hubs, units, r);
  if (hub < 0) return flows;
  for (int j = 1; j <= p.k; ++j) {
    const int other = (hub + j) % units;
    flows.push_back(p.kind == PatternKind::kIncast ? Flow{other, hub} : Flow{hub, other});
  }
  return flows;
}

double jain_index(std::span<const double> rates) {
  double sum = 0, sum_sq = 0;
  for (const double x : rates) {
    if (x < 0) throw std::invalid_argument(fmt::format("jain_index: negative rate {}", x));
    sum += x;
    sum_sq += x * x;
  }
  if (rates.empty() || sum_sq == 0) return 1;
  return sum * sum / (static_cast<double>(rates.size()) * sum_sq);
}

}  // namespace ibscope::measure

namespace ibscope::measure {

RoundFigures round_figures(std::span<const double> flow_bytes, std::span<const double> flow_s) {
  if (flow_bytes.size() != flow_s.size()) {
    throw std::invalid_argument("round_figures: one time per flow");
  }
  RoundFigures f;
  double bytes = 0, slowest_s = 0;
  for (std::size_t i = 0; i < flow_s.size(); ++i) {
    f.flow_gbps.push_back(flow_s[i] > 0 ? flow_bytes[i] / flow_s[i] / 1e9 : 0);
    bytes += flow_bytes[i];
    slowest_s = std::max(slowest_s, flow_s[i]);
  }
  f.aggregate_gbps = slowest_s > 0 ? bytes / slowest_s / 1e9 : 0;
  f.fairness_jain = jain_index(f.flow_gbps);
  return f;
}

}  // namespace ibscope::measure
