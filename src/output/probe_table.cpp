#include "ibscope/output/probe_table.hpp"

#include <fmt/format.h>

namespace ibscope::output {

void ProbeTable::ports(const std::vector<probes::RankPort>& ports,
                       const std::vector<std::string>& hosts) {
  fmt::print(out_, "# probe {}: {}\n", test_.name, test_.description);
  for (std::size_t r = 0; r < ports.size(); ++r) {
    const auto& p = ports[r];
    fmt::print(out_, "#   rank {:>4}  host {}  {} {} {:.1f} Gb/s ({:.2f} GB/s) MTU {} {}\n", r,
               r < hosts.size() ? hosts[r] : "?", p.device, p.link_layer, p.data_rate_gbit,
               p.data_rate_gbit / 8, p.active_mtu_bytes,
               p.gid_index >= 0 ? fmt::format("GID {} {}", p.gid_index, p.gid) : "LID");
    fmt::print(out_, "#               {}\n", p.binding);
  }
  std::fflush(out_);
}

void ProbeTable::header() {
  header_done_ = true;
  if (latency()) {
    fmt::print(out_, "# {:>9} {:>10} {:>7} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10} {:>9}\n",
               "pair", "size(B)", "iters", "t_min(us)", "t_p50(us)", "t_p99(us)", "t_p99.9(us)",
               "t_max(us)", "t_mean(us)", "t_sd(us)");
  } else {
    fmt::print(out_, "# {:>9} {:>10} {:>7} {:>12} {:>12} {:>13} {:>14} {:>10} {:>7}\n", "pair",
               "size(B)", "iters", "bw_avg(GB/s)", "bw_avg(Gb/s)", "bw_peak(GB/s)",
               "msg_rate(Mpps)", "line(Gb/s)", "%line");
  }
}

void ProbeTable::rows(const std::vector<measure::ProbeRow>& rows) {
  if (!header_done_) header();
  for (const auto& r : rows) {
    const std::string pair =
        fmt::format("{}{}{}", r.rank_a, r.bidirectional ? "<>" : "->", r.rank_b);
    largest_ = std::max(largest_, r.size_bytes);
    if (latency()) {
      const measure::Stats& t = r.time_us;
      fmt::print(out_,
                 "  {:>9} {:>10} {:>7} {:>10.2f} {:>10.2f} {:>10.2f} {:>11.2f} {:>10.2f} "
                 "{:>10.2f} {:>9.2f}\n",
                 pair, r.size_bytes, r.iterations, t.min, t.p50, t.p99, t.p99_9, t.max, t.mean,
                 t.sd);
      figures_[{r.rank_a, r.rank_b}][r.size_bytes] = t.p50;
    } else {
      const double gbit = r.bw_gbps * 8;
      fmt::print(out_,
                 "  {:>9} {:>10} {:>7} {:>12.3f} {:>12.3f} {:>13.3f} {:>14.4f} {:>10.1f} {:>7}\n",
                 pair, r.size_bytes, r.iterations, r.bw_gbps, gbit, r.peak_bw_gbps, r.msg_rate_mps,
                 r.line_rate_gbit,
                 r.line_rate_gbit > 0 ? fmt::format("{:.1f}", 100 * gbit / r.line_rate_gbit)
                                      : std::string("-"));
      figures_[{r.rank_a, r.rank_b}][r.size_bytes] = r.bw_gbps;
    }
  }
  std::fflush(out_);
}

void ProbeTable::footer() {
  if (figures_.size() < 2) return;
  fmt::print(out_, "#\n# {} at {} B, rank x rank ({}; row initiates):\n", test_.name, largest_,
             latency() ? "t_p50(us)" : "bw_avg(GB/s)");
  fmt::print(out_, "# {:>6}", "");
  for (int b = 0; b < ranks_; ++b) fmt::print(out_, " {:>9}", b);
  fmt::print(out_, "\n");
  for (int a = 0; a < ranks_; ++a) {
    fmt::print(out_, "# {:>6}", a);
    for (int b = 0; b < ranks_; ++b) {
      const auto it = figures_.find({a, b});
      if (it == figures_.end() || !it->second.contains(largest_)) {
        fmt::print(out_, " {:>9}", a == b ? "." : "-");
      } else {
        fmt::print(out_, " {:>9.3f}", it->second.at(largest_));
      }
    }
    fmt::print(out_, "\n");
  }
  std::fflush(out_);
}

}  // namespace ibscope::output
