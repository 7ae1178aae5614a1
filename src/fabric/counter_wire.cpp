#include "ibscope/fabric/counter_wire.hpp"

#include <fmt/format.h>

#include <charconv>

#include "ibscope/core/error.hpp"

namespace ibscope::fabric {
namespace {

// "N\t<nic>\t<driver>\t<interval_s>\t<flags>\t<scope>" then "C\t<source>\t<name>\t<delta>\t<flags>"
// per counter. Flags: a = appeared, v = vanished, s = saturated, r = reset.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

[[noreturn]] void malformed(std::string_view line) {
  throw RemoteError(fmt::format("NIC counters from a peer: malformed line \"{}\"",
                                line.substr(0, std::min<std::size_t>(line.size(), 80))));
}

}  // namespace

std::string encode_deltas(const std::vector<NicDelta>& deltas) {
  std::string out;
  for (const NicDelta& d : deltas) {
    out += fmt::format("N\t{}\t{}\t{:.6f}\t{}{}\t{}\n", d.nic, d.driver, d.interval_s,
                       d.appeared ? "a" : "", d.vanished ? "v" : "", d.scope);
    for (const CounterDelta& c : d.counters) {
      out += fmt::format("C\t{}\t{}\t{}\t{}{}\n", name_of(c.source), c.name, c.delta,
                         c.saturated ? "s" : "", c.reset ? "r" : "");
    }
  }
  return out;
}

std::vector<NicDelta> decode_deltas(std::string_view blob) {
  std::vector<NicDelta> out;
  while (!blob.empty()) {
    const auto nl = blob.find('\n');
    const std::string_view line = blob.substr(0, nl);
    blob.remove_prefix(nl == std::string_view::npos ? blob.size() : nl + 1);
    const auto f = fields_of(line);
    if (f.size() != (f[0] == "N" ? 6u : 5u)) malformed(line);
    if (f[0] == "N") {
      NicDelta d;
      d.nic = std::string(f[1]);
      d.driver = std::string(f[2]);
      const auto [p, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), d.interval_s);
      if (ec != std::errc()) malformed(line);
      d.appeared = f[4].find('a') != std::string_view::npos;
      d.vanished = f[4].find('v') != std::string_view::npos;
      d.scope = std::string(f[5]);
      out.push_back(std::move(d));
    } else if (f[0] == "C" && !out.empty()) {
      CounterDelta c;
      const auto source = counter_source_named(f[1]);
      if (!source) malformed(line);
      c.source = *source;
      c.name = std::string(f[2]);
      const auto [p, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), c.delta);
      if (ec != std::errc() || p != f[3].data() + f[3].size()) malformed(line);
      c.saturated = f[4].find('s') != std::string_view::npos;
      c.reset = f[4].find('r') != std::string_view::npos;
      const auto spec = find_counter(c.source, out.back().driver, c.name);
      c.kind = spec ? spec->kind : CounterKind::kOther;
      out.back().counters.push_back(std::move(c));
    } else {
      malformed(line);
    }
  }
  return out;
}

}  // namespace ibscope::fabric
