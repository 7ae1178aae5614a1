#include "ibscope/output/console.hpp"

#include <fmt/format.h>

#include "ibscope/core/units.hpp"

namespace ibscope::output {

void print_banner(std::FILE* out, const BannerInfo& b) {
  fmt::print(out, "# ibscope {}: {} ranks, bootstrap {}, {}build {}\n", b.command, b.ranks,
             b.bootstrap, b.ucx_version.empty() ? "" : fmt::format("UCX {}, ", b.ucx_version),
             b.build);
  for (std::size_t r = 0; r < b.hosts.size(); ++r) {
    const bool rail = r < b.rank_rails.size() && !b.rank_rails[r].empty();
    fmt::print(out, "#   rank {:>4}  host {}{}{}\n", r, b.hosts[r], rail ? "  " : "",
               rail ? b.rank_rails[r] : "");
  }
  for (const auto& n : b.ucx_notes) fmt::print(out, "#   ucx {}\n", n);
  for (const auto& t : b.transports) fmt::print(out, "#   transports {}\n", t);
  for (const auto& w : b.warnings) fmt::print(out, "# WARNING: {}\n", w);
  std::fflush(out);
}

void CollectiveTable::header() {
  fmt::print(out_, "#\n");
  fmt::print(out_, "# {:>12} {:>12} {:>8} {:>6} {:>9}   {:^39}   {:^39}\n", "", "", "", "", "",
             "out-of-place", "in-place");
  fmt::print(
      out_,
      "# {:>12} {:>12} {:>8} {:>6} {:>9}   {:>9} {:>9} {:>9} {:>9}   {:>9} {:>9} {:>9} {:>9}\n",
      "size(B)", "count(elts)", "type", "redop", "algo", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
      "#wrong", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  if (imbalance_) {
    fmt::print(out_,
               "# imbalance(send/recv/pair): max/mean of the bytes per rank sent, received, and "
               "per rank pair (size: the mean bytes a rank sends)\n");
  }
  std::fflush(out_);
}

namespace {
std::string wrong_text(const measure::CollectiveRow& r) {
  return r.wrong ? fmt::format("{}", *r.wrong) : std::string("N/A");
}
}  // namespace

void CollectiveTable::rows(const std::vector<measure::CollectiveRow>& rows) {
  if (rows.empty()) return;
  const measure::CollectiveRow& first = rows.front();
  // Rows picked by -A auto say so: "auto:rd".
  const std::string algo =
      first.selected_by.empty() ? first.algorithm : fmt::format("auto:{}", first.algorithm);
  std::string line = fmt::format("  {:>12} {:>12} {:>8} {:>6} {:>9}", first.size_bytes, first.count,
                                 name_of(first.type), measure::name_of(first.op), algo);
  const measure::CollectiveRow* oop = nullptr;
  const measure::CollectiveRow* ip = nullptr;
  for (const auto& r : rows) (r.in_place ? ip : oop) = &r;
  for (const measure::CollectiveRow* r : {oop, ip}) {
    if (r == nullptr) {
      line += fmt::format("   {:>9} {:>11} {:>11} {:>6}", "-", "-", "-", "-");
      continue;
    }
    line += fmt::format("   {:>9.2f} {:>11.3f} {:>11.3f} {:>6}", r->time_us, r->algbw_gbps,
                        r->busbw_gbps, wrong_text(*r));
    busbw_sum_ += r->busbw_gbps;
    ++busbw_n_;
    if (r->wrong) wrong_total_ += *r->wrong;
  }
  if (imbalance_ && first.send_imbalance) {
    line += fmt::format("   imbalance {:.2f}/{:.2f}/{:.2f}", *first.send_imbalance,
                        first.recv_imbalance.value_or(1), first.pair_imbalance.value_or(1));
  }
  fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

void CollectiveTable::footer() {
  fmt::print(out_, "# Out of bounds values : {} {}\n", wrong_total_,
             wrong_total_ ? "FAILED" : "OK");
  fmt::print(out_, "# Avg bus bandwidth    : {:.4f} GB/s\n",
             busbw_n_ > 0 ? busbw_sum_ / busbw_n_ : 0.0);
  fmt::print(out_, "#\n");
  std::fflush(out_);
}

void P2pTable::rows(const std::vector<measure::P2pRow>& rows) {
  for (const auto& r : rows) {
    if (r.pattern) {
      pattern_row(r);
      continue;
    }
    if (r.test != last_test_) {
      last_test_ = r.test;
      if (r.test == "latency") {
        fmt::print(out_, "#\n# p2p latency (ping-pong, half round trip)\n");
        fmt::print(out_, "# {:>5} {:>5} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "a",
                   "b", "size(B)", "min(us)", "p50(us)", "p99(us)", "max(us)", "mean(us)",
                   "sd(us)");
      } else {
        fmt::print(out_, "#\n# p2p {} ({} window)\n",
                   r.test == "bw" ? "bandwidth, unidirectional" : "bandwidth, bidirectional",
                   fmt::format("{}-message", r.window));
        fmt::print(out_, "# {:>5} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "a", "b", "size(B)",
                   "bw(GB/s)", "peak(GB/s)", "rate(Mmsg/s)", "window(us)");
      }
    }
    if (r.test == "latency") {
      fmt::print(
          out_,
          "  {:>5} {:>5} {:>12} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n",
          r.rank_a, r.rank_b, r.size_bytes, r.time_us.min, r.time_us.p50, r.time_us.p99,
          r.time_us.max, r.time_us.mean, r.time_us.sd);
    } else {
      fmt::print(out_, "  {:>5} {:>5} {:>12} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.1f}\n", r.rank_a,
                 r.rank_b, r.size_bytes, r.bw_gbps, r.peak_bw_gbps, r.msg_rate_mps, r.time_us.mean);
    }
  }
  std::fflush(out_);
}

// One flow of a pattern round per line, the round's aggregate and fairness beside each.
void P2pTable::pattern_row(const measure::P2pRow& r) {
  const measure::PatternFlowInfo& p = *r.pattern;
  const std::string key = "pattern " + p.pattern;
  if (key != last_test_) {
    last_test_ = key;
    fmt::print(out_,
               "#\n# p2p --pattern {} (flows of a round at once, {}-message window; aggregate: "
               "all flows' bytes / the slowest flow's time; fairness: Jain's index)\n",
               p.pattern, r.window);
    fmt::print(out_, "# {:>5} {:>5} {:>5} {:>5} {:>12} {:>12} {:>14} {:>8}\n", "round", "hub", "a",
               "b", "size(B)", "flow(GB/s)", "aggregate(GB/s)", "jain");
  }
  fmt::print(out_, "  {:>5} {:>5} {:>5} {:>5} {:>12} {:>12.4f} {:>14.4f} {:>8.3f}\n", p.round,
             p.hub_rank < 0 ? std::string("-") : std::to_string(p.hub_rank), r.rank_a, r.rank_b,
             r.size_bytes, r.bw_gbps, p.aggregate_bw_gbps, p.fairness_jain);
}

}  // namespace ibscope::output
