// Uses the installed libibscope through its headers: sizes as ibscope parses them, and a
// Prometheus label escaped as the textfile export does.
#include <fmt/format.h>

#include <ibscope/core/units.hpp>
#include <ibscope/output/prometheus.hpp>

int main() {
  const auto bytes = ibscope::units::parse_size_bytes("64K", "--size");
  const auto label = ibscope::output::prometheus::escape_label_value("a\"b");
  fmt::print("{} bytes = {}; label {}\n", bytes, ibscope::units::format_size(bytes), label);
  return bytes == 65536 && label == "a\\\"b" ? 0 : 1;
}
