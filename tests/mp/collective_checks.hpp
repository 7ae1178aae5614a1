#pragma once
// Shared by the multi-process collective tests: the element counts every algorithm must handle,
// and the check that every row of a run was verified.

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace ibscope::test {

/// Sizes in bytes for element counts 0, 1, p-1, a prime (1009), one above `chunk_bytes` (so a
/// message spans more than one chunk), and 3 MiB + 7 elements (many chunks, odd tail).
inline std::string sizes_for(int p, int element_bytes, int chunk_bytes = 256 * 1024) {
  const int e = element_bytes;
  return fmt::format("0,{},{},{},{},{}", e, e * std::max(p - 1, 1), 1009 * e,
                     (chunk_bytes / e + 3) * e, 3 * 1024 * 1024 + 7 * e);
}

/// The run wrote `expected_rows` collective rows, every one verified with #wrong == 0, and
/// completed.
inline void check_all_rows_verified(const nlohmann::json& doc, std::size_t expected_rows) {
  const auto& rows = doc.at("collectives").at("rows");
  CHECK(rows.size() == expected_rows);
  for (const auto& r : rows) {
    INFO(r.dump());
    REQUIRE(r.at("wrong").is_number());
    CHECK(r.at("wrong").get<int>() == 0);
  }
  CHECK(doc.at("complete").get<bool>());
}

}  // namespace ibscope::test
