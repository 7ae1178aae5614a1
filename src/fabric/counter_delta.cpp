#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "ibscope/core/units.hpp"
#include "ibscope/fabric/counters.hpp"

namespace ibscope::fabric {
namespace {

constexpr std::uint64_t max_of_width(int bits) noexcept {
  return bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
}

CounterSpec spec_of(const NicSample& nic, const CounterValue& v) {
  if (auto s = find_counter(v.source, nic.driver, v.name)) return *s;
  return CounterSpec{"", v.source, CounterKind::kOther, 64, CounterLimit::kWraps, 0, "", ""};
}

}  // namespace

CounterDelta counter_delta(const CounterSpec& spec, std::uint64_t before, std::uint64_t after) {
  CounterDelta d;
  d.source = spec.source;
  d.name = std::string(spec.name);
  d.kind = spec.kind;
  const std::uint64_t max = max_of_width(spec.width_bits);
  if (after >= before) {
    d.delta = after - before;
    d.saturated = spec.limit == CounterLimit::kSaturates && after >= max && after > 0;
    return d;
  }
  // Backwards: a wrap of a 32-bit counter (some drivers' hw counters, or a data counter the
  // kernel read from a 32-bit PMA): it was in the top half of 32 bits and is now in the bottom
  // half. Anything else went back because it was cleared (a driver reload, `perfquery -R`).
  constexpr std::uint64_t k32 = std::numeric_limits<std::uint32_t>::max();
  if (spec.limit == CounterLimit::kWraps && before <= k32 && before > k32 / 2 && after <= k32 / 2) {
    d.delta = (k32 - before) + after + 1;
    return d;
  }
  d.delta = after;
  d.reset = true;
  return d;
}

std::uint64_t NicDelta::sum(CounterKind kind) const noexcept {
  std::uint64_t total = 0;
  for (const auto& c : counters) {
    if (c.kind == kind) total += c.delta;
  }
  return total;
}

std::uint64_t NicDelta::traffic_bytes() const noexcept {
  std::uint64_t port = 0, netdev = 0;
  bool have_port = false;
  for (const auto& c : counters) {
    const auto spec = find_counter(c.source, driver, c.name);
    if (!spec || spec->kind != CounterKind::kTraffic || spec->unit_bytes == 0) continue;
    if (c.source == CounterSource::kIbPort) {
      have_port = true;
      port += c.delta * spec->unit_bytes;
    } else {
      netdev += c.delta * spec->unit_bytes;
    }
  }
  return have_port ? port : netdev;
}

std::string NicDelta::describe(CounterKind kind, bool (*keep)(const CounterDelta&)) const {
  std::string out;
  for (const auto& c : counters) {
    if (c.kind != kind || c.delta == 0 || (keep != nullptr && !keep(c))) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} +{}{}", c.name, units::with_commas(c.delta),
                       c.saturated ? " (saturated)"
                       : c.reset   ? " (reset)"
                                   : "");
  }
  return out;
}

std::vector<NicDelta> add_deltas(std::vector<NicDelta> into, const std::vector<NicDelta>& more) {
  for (const NicDelta& m : more) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const NicDelta& d) { return d.host == m.host && d.nic == m.nic; });
    if (it == into.end()) {
      into.push_back(m);
      continue;
    }
    it->interval_s += m.interval_s;
    it->appeared = it->appeared || m.appeared;
    it->vanished = it->vanished || m.vanished;
    for (const auto& c : m.counters) {
      auto same = std::find_if(it->counters.begin(), it->counters.end(), [&](const auto& o) {
        return o.source == c.source && o.name == c.name;
      });
      if (same == it->counters.end()) {
        it->counters.push_back(c);
      } else {
        same->delta += c.delta;
        same->saturated = same->saturated || c.saturated;
        same->reset = same->reset || c.reset;
      }
    }
  }
  return into;
}

CounterTotals totals_of(const std::vector<NicDelta>& deltas) noexcept {
  CounterTotals t;
  for (const NicDelta& d : deltas) {
    t.errors += d.sum(CounterKind::kErrors);
    t.congestion += d.sum(CounterKind::kCongestion);
    t.flaps += d.sum(CounterKind::kFlaps);
    t.traffic_bytes += d.traffic_bytes();
  }
  return t;
}

std::vector<NicDelta> counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after) {
  std::map<std::string, const NicSample*> earlier;
  for (const auto& n : before.nics) earlier[n.nic] = &n;
  std::vector<NicDelta> out;
  const double interval_s = after.time_s - before.time_s;
  for (const NicSample& n : after.nics) {
    NicDelta d;
    d.nic = n.nic;
    d.driver = n.driver;
    d.scope = n.scope;
    d.interval_s = interval_s;
    const auto it = earlier.find(n.nic);
    if (it == earlier.end()) {
      d.appeared = true;
      out.push_back(std::move(d));
      continue;
    }
    const NicSample& old = *it->second;
    earlier.erase(it);
    for (const CounterValue& v : n.values) {
      const auto prev = std::find_if(old.values.begin(), old.values.end(), [&](const auto& o) {
        return o.source == v.source && o.name == v.name;
      });
      if (prev == old.values.end()) continue;  // a counter that appeared: no growth known
      CounterSpec spec = spec_of(n, v);
      CounterDelta c = counter_delta(spec, prev->value, v.value);
      c.name = v.name;
      if (c.delta > 0 || c.saturated) d.counters.push_back(std::move(c));
    }
    out.push_back(std::move(d));
  }
  for (const NicSample& n : before.nics) {
    if (!earlier.count(n.nic)) continue;
    NicDelta d;
    d.nic = n.nic;
    d.driver = n.driver;
    d.scope = n.scope;
    d.interval_s = interval_s;
    d.vanished = true;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ibscope::fabric
