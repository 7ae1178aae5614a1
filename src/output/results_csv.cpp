#include "ibscope/output/results_csv.hpp"

#include <fmt/format.h>

#include "ibscope/core/atomic_file.hpp"
#include "ibscope/output/csv.hpp"
#include "ibscope/output/topology_table.hpp"
#include "ibscope/results/collective_columns.hpp"

namespace ibscope::output {
namespace {

std::string csv_cell(const results::Cell& cell, int decimals) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return {};
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "1" : "0";
        } else if constexpr (std::is_same_v<T, double>) {
          return fmt::format("{:.{}f}", v, decimals);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return csv_field(v);
        } else {
          return fmt::format("{}", v);
        }
      },
      cell);
}

// The NIC counter columns of p2p and probe rows (collective rows have theirs in the table).
constexpr std::string_view kCounterHeader =
    ",nic_errors,nic_congestion,nic_flaps,nic_traffic_bytes";

std::string counter_cells(const std::vector<fabric::NicDelta>& deltas) {
  const fabric::CounterTotals t = fabric::totals_of(deltas);
  return fmt::format(",{},{},{},{}", t.errors, t.congestion, t.flaps, t.traffic_bytes);
}

}  // namespace

std::string results_csv(const results::Document& doc) {
  std::string csv;
  if (!doc.collectives.rows.empty()) {
    csv += "section";
    for (const results::CollectiveColumn& col : results::collective_columns()) {
      if (col.in_csv) csv += fmt::format(",{}", col.key);
    }
    csv += '\n';
    for (const auto& r : doc.collectives.rows) {
      csv += "collectives";
      for (const results::CollectiveColumn& col : results::collective_columns()) {
        if (col.in_csv) csv += ',' + csv_cell(col.get(r), col.csv_decimals);
      }
      csv += '\n';
    }
  }
  if (!doc.p2p.rows.empty()) {
    csv +=
        "section,test,rank_a,rank_b,host_a,host_b,size_bytes,window,time_us_mean,time_us_p50,"
        "time_us_p99,time_us_min,time_us_max,bw_gbps,peak_bw_gbps,msg_rate_mps";
    csv += kCounterHeader;
    csv += '\n';
    for (const auto& r : doc.p2p.rows) {
      csv += fmt::format(
          "p2p,{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},"
          "{:.4f}",
          csv_field(r.test), r.rank_a, r.rank_b, csv_field(r.host_a), csv_field(r.host_b),
          r.size_bytes, r.window, r.time_us.mean, r.time_us.p50, r.time_us.p99, r.time_us.min,
          r.time_us.max, r.bw_gbps, r.peak_bw_gbps, r.msg_rate_mps);
      csv += counter_cells(r.nic_counters) + '\n';
    }
  }
  if (doc.probes && !doc.probes->rows.empty()) {
    csv +=
        "section,test,rank_a,rank_b,host_a,host_b,device_a,device_b,bidirectional,size_bytes,"
        "iterations,qps,mtu_bytes,time_us_p50,time_us_p99,time_us_p99_9,time_us_min,"
        "time_us_max,bw_gbps,bw_gbit,peak_bw_gbps,msg_rate_mps,line_rate_gbit";
    csv += kCounterHeader;
    csv += '\n';
    for (const auto& r : doc.probes->rows) {
      const measure::Stats& t = r.time_us;
      csv += fmt::format(
          "probes,{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},"
          "{:.4f},{:.4f},{:.4f},{:.2f}",
          csv_field(r.test), r.rank_a, r.rank_b, csv_field(r.host_a), csv_field(r.host_b),
          csv_field(r.device_a), csv_field(r.device_b), r.bidirectional ? 1 : 0, r.size_bytes,
          r.iterations, r.qps, r.mtu_bytes, t.p50, t.p99, t.p99_9, t.min, t.max, r.bw_gbps,
          r.bw_gbps * 8, r.peak_bw_gbps, r.msg_rate_mps, r.line_rate_gbit);
      csv += counter_cells(r.nic_counters) + '\n';
    }
  }
  if (doc.topology) csv += topology_csv(*doc.topology);
  return csv;
}

std::filesystem::path write_results_csv(const results::Document& doc,
                                        const std::filesystem::path& json_path) {
  auto path = json_path;
  path.replace_extension(".csv");
  write_file_exclusive(path, results_csv(doc));
  return path;
}

}  // namespace ibscope::output
