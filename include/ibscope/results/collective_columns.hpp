#pragma once
/// The scalar columns of a collective row, written once: for each, its name (the JSON member and
/// the CSV header, unit included), how its value is read from and written to the row, whether
/// the JSON member may be absent or null, and how the CSV prints it. The results file's writer
/// and reader (src/results/document_json.cpp) and the CSV (output/results_csv.cpp) iterate this
/// table; the row's structured members (iteration_us, samples_us, stalls, mem and mem_path) stay
/// with the writer. A new field on every collective row: a member of measure::CollectiveRow,
/// an entry here, its line in the schema, the code that measures it, and results/README.md
/// (docs/architecture.md, "How to add a field to every collective row").

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "ibscope/measure/records.hpp"

namespace ibscope::results {

/// One column's value. monostate: null (a row verified with -c 0 has no #wrong).
using Cell = std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string>;

enum class CellKind { kText, kBool, kInt, kUint, kReal };

struct CollectiveColumn {
  std::string_view key;  ///< JSON member and CSV header
  CellKind kind = CellKind::kText;
  /// JSON: the member is left out when this says so, and a file without it reads as the row's
  /// default (members added after files were written). Null: always written, always required.
  bool (*omitted)(const measure::CollectiveRow&) = nullptr;
  bool nullable = false;  ///< JSON null reads as monostate
  bool in_json = true;    ///< false: derived, CSV only
  bool in_csv = true;
  int csv_decimals = 0;  ///< reals in the CSV
  Cell (*get)(const measure::CollectiveRow&) = nullptr;
  /// Sets the row from a cell of `kind` (or monostate where nullable); false for a text the
  /// column does not know (an enum name from a newer build). Null for CSV-only columns.
  bool (*set)(measure::CollectiveRow&, const Cell&) = nullptr;
};

/// Every column, in CSV order (JSON-only columns where they read best; JSON members are
/// written in name order anyway).
std::span<const CollectiveColumn> collective_columns();

}  // namespace ibscope::results
