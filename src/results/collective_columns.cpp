#include "ibscope/results/collective_columns.hpp"

#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/core/datatype.hpp"

// The table below names only the members each column sets; the rest keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace ibscope::results {
namespace {

using measure::CollectiveRow;

template <typename E>
std::optional<E> named(const Cell& c, std::initializer_list<E> all) {
  const auto* text = std::get_if<std::string>(&c);
  if (text == nullptr) return std::nullopt;
  for (E e : all) {
    if (name_of(e) == *text) return e;
  }
  return std::nullopt;
}

// The cell as the member's type: the reader passes the kind the column declares, and integers
// may come as either sign.
template <typename T>
T value(const Cell& c) {
  return std::visit(
      [](const auto& v) -> T {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, T>) {
          return v;
        } else if constexpr (std::is_arithmetic_v<V> && std::is_arithmetic_v<T> &&
                             !std::is_same_v<V, bool> && !std::is_same_v<T, bool>) {
          return static_cast<T>(v);
        } else {
          return T{};
        }
      },
      c);
}

constexpr auto kTypesAll = {DataType::kFloat32, DataType::kFloat64, DataType::kInt32,
                            DataType::kInt64,   DataType::kFloat16, DataType::kBFloat16};
constexpr auto kOpsAll = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax};
constexpr auto kAveragesAll = {measure::TimeAverage::kRank0, measure::TimeAverage::kMean,
                               measure::TimeAverage::kMin, measure::TimeAverage::kMax};

const std::vector<CollectiveColumn>& table() {
  static const std::vector<CollectiveColumn> columns{
      {.key = "collective",
       .kind = CellKind::kText,
       .get = [](const CollectiveRow& r) -> Cell { return std::string(name_of(r.collective)); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             const auto v = collective_named(value<std::string>(c));
             if (v) r.collective = *v;
             return v.has_value();
           }},
      {.key = "algorithm",
       .kind = CellKind::kText,
       .get = [](const CollectiveRow& r) -> Cell { return r.algorithm; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.algorithm = value<std::string>(c);
             return true;
           }},
      {.key = "selected_by",
       .kind = CellKind::kText,
       .omitted = [](const CollectiveRow& r) { return r.selected_by.empty(); },
       .in_csv = false,
       .get = [](const CollectiveRow& r) -> Cell { return r.selected_by; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.selected_by = value<std::string>(c);
             return true;
           }},
      {.key = "type",
       .kind = CellKind::kText,
       .get = [](const CollectiveRow& r) -> Cell { return std::string(name_of(r.type)); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             const auto v = named(c, kTypesAll);
             if (v) r.type = *v;
             return v.has_value();
           }},
      {.key = "op",
       .kind = CellKind::kText,
       .get = [](const CollectiveRow& r) -> Cell { return std::string(measure::name_of(r.op)); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             if (value<std::string>(c) == "none") {
               r.op.reset();
               return true;
             }
             r.op = named(c, kOpsAll);
             return r.op.has_value();
           }},
      {.key = "root",
       .kind = CellKind::kInt,
       .omitted = [](const CollectiveRow& r) { return r.root < 0; },
       .in_csv = false,
       .get = [](const CollectiveRow& r) -> Cell { return std::int64_t{r.root}; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.root = value<int>(c);
             return true;
           }},
      {.key = "in_place",
       .kind = CellKind::kBool,
       .get = [](const CollectiveRow& r) -> Cell { return r.in_place; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.in_place = value<bool>(c);
             return true;
           }},
      {.key = "size_bytes",
       .kind = CellKind::kUint,
       .get = [](const CollectiveRow& r) -> Cell { return r.size_bytes; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.size_bytes = value<std::uint64_t>(c);
             return true;
           }},
      {.key = "count",
       .kind = CellKind::kUint,
       .get = [](const CollectiveRow& r) -> Cell { return r.count; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.count = value<std::uint64_t>(c);
             return true;
           }},
      {.key = "ranks",
       .kind = CellKind::kInt,
       .get = [](const CollectiveRow& r) -> Cell { return std::int64_t{r.ranks}; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.ranks = value<int>(c);
             return true;
           }},
      {.key = "time_us",
       .kind = CellKind::kReal,
       .csv_decimals = 3,
       .get = [](const CollectiveRow& r) -> Cell { return r.time_us; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.time_us = value<double>(c);
             return true;
           }},
      {.key = "average",
       .kind = CellKind::kText,
       .get = [](const CollectiveRow& r) -> Cell { return std::string(name_of(r.average)); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             const auto v = named(c, kAveragesAll);
             if (v) r.average = *v;
             return v.has_value();
           }},
      {.key = "algbw_gbps",
       .kind = CellKind::kReal,
       .csv_decimals = 4,
       .get = [](const CollectiveRow& r) -> Cell { return r.algbw_gbps; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.algbw_gbps = value<double>(c);
             return true;
           }},
      {.key = "busbw_gbps",
       .kind = CellKind::kReal,
       .csv_decimals = 4,
       .get = [](const CollectiveRow& r) -> Cell { return r.busbw_gbps; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.busbw_gbps = value<double>(c);
             return true;
           }},
      {.key = "wrong",
       .kind = CellKind::kUint,
       .nullable = true,
       .get = [](const CollectiveRow& r) -> Cell {
         if (!r.wrong) return std::monostate{};
         return *r.wrong;
       },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             if (std::holds_alternative<std::monostate>(c)) {
               r.wrong.reset();
             } else {
               r.wrong = value<std::uint64_t>(c);
             }
             return true;
           }},
      // All-to-all-v's imbalance (max / mean), JSON only: the other collectives have none.
      {.key = "send_imbalance",
       .kind = CellKind::kReal,
       .omitted = [](const CollectiveRow& r) { return !r.send_imbalance.has_value(); },
       .in_csv = false,
       .get = [](const CollectiveRow& r) -> Cell { return r.send_imbalance.value_or(1.0); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.send_imbalance = value<double>(c);
             return true;
           }},
      {.key = "recv_imbalance",
       .kind = CellKind::kReal,
       .omitted = [](const CollectiveRow& r) { return !r.recv_imbalance.has_value(); },
       .in_csv = false,
       .get = [](const CollectiveRow& r) -> Cell { return r.recv_imbalance.value_or(1.0); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.recv_imbalance = value<double>(c);
             return true;
           }},
      {.key = "pair_imbalance",
       .kind = CellKind::kReal,
       .omitted = [](const CollectiveRow& r) { return !r.pair_imbalance.has_value(); },
       .in_csv = false,
       .get = [](const CollectiveRow& r) -> Cell { return r.pair_imbalance.value_or(1.0); },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.pair_imbalance = value<double>(c);
             return true;
           }},
      {.key = "iteration_rank",
       .kind = CellKind::kInt,
       .get = [](const CollectiveRow& r) -> Cell { return std::int64_t{r.iteration_rank}; },
       .set =
           [](CollectiveRow& r, const Cell& c) {
             r.iteration_rank = value<int>(c);
             return true;
           }},
      // The iteration statistics are one JSON object (iteration_us); the CSV flattens four.
      {.key = "iteration_us_p50",
       .kind = CellKind::kReal,
       .in_json = false,
       .csv_decimals = 3,
       .get = [](const CollectiveRow& r) -> Cell { return r.iteration_us.p50; }},
      {.key = "iteration_us_p99",
       .kind = CellKind::kReal,
       .in_json = false,
       .csv_decimals = 3,
       .get = [](const CollectiveRow& r) -> Cell { return r.iteration_us.p99; }},
      {.key = "iteration_us_min",
       .kind = CellKind::kReal,
       .in_json = false,
       .csv_decimals = 3,
       .get = [](const CollectiveRow& r) -> Cell { return r.iteration_us.min; }},
      {.key = "iteration_us_max",
       .kind = CellKind::kReal,
       .in_json = false,
       .csv_decimals = 3,
       .get = [](const CollectiveRow& r) -> Cell { return r.iteration_us.max; }},
      // The row's NIC counters summed over hosts and NICs (nic_counters in the file).
      {.key = "nic_errors",
       .kind = CellKind::kUint,
       .in_json = false,
       .get = [](const CollectiveRow& r) -> Cell {
         return fabric::totals_of(r.nic_counters).errors;
       }},
      {.key = "nic_congestion",
       .kind = CellKind::kUint,
       .in_json = false,
       .get = [](const CollectiveRow& r) -> Cell {
         return fabric::totals_of(r.nic_counters).congestion;
       }},
      {.key = "nic_flaps",
       .kind = CellKind::kUint,
       .in_json = false,
       .get = [](const CollectiveRow& r) -> Cell {
         return fabric::totals_of(r.nic_counters).flaps;
       }},
      {.key = "nic_traffic_bytes",
       .kind = CellKind::kUint,
       .in_json = false,
       .get = [](const CollectiveRow& r) -> Cell {
         return fabric::totals_of(r.nic_counters).traffic_bytes;
       }},
  };
  return columns;
}

}  // namespace

std::span<const CollectiveColumn> collective_columns() { return table(); }

}  // namespace ibscope::results
