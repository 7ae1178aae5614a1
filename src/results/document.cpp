#include "ibscope/results/document.hpp"

#include <ctime>

namespace ibscope::results {

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void Document::fail(std::string kind, std::string message) {
  complete = false;
  error = RunError{std::move(kind), std::move(message)};
}

void Document::add_row(const measure::ProbeRow& row) {
  if (!probes) probes.emplace();
  probes->rows.push_back(row);
}

}  // namespace ibscope::results
