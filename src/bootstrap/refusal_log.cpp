#include "ibscope/bootstrap/refusal_log.hpp"

#include <fmt/format.h>

#include <utility>

namespace ibscope::bootstrap {

std::string_view refusal_kind_name(RefusalKind kind) noexcept {
  switch (kind) {
    case RefusalKind::kNoToken:
      return "no token";
    case RefusalKind::kWrongToken:
      return "wrong token";
    case RefusalKind::kWrongJob:
      return "wrong job";
    case RefusalKind::kMalformed:
      return "malformed";
    case RefusalKind::kStalled:
      return "stalled";
    case RefusalKind::kFlood:
      return "flood";
    case RefusalKind::kGuessing:
      return "guessing";
  }
  return "unknown";
}

RefusalLog::RefusalLog(int first_per_kind, double summary_every_s, Sink sink)
    : first_per_kind_(first_per_kind), summary_every_s_(summary_every_s), sink_(std::move(sink)) {}

void RefusalLog::refused(RefusalKind kind, std::string_view peer, std::string_view why,
                         Clock::time_point now) {
  const auto k = static_cast<std::size_t>(kind);
  if (total_ == 0) last_summary_ = now;  // the first summary comes an interval after this
  ++total_;
  const int n = ++counts_[k];
  if (n <= first_per_kind_) {
    sink_(fmt::format("bootstrap: refused {}: {}{}", peer, why,
                      n == first_per_kind_
                          ? fmt::format(" (further '{}' refusals are counted, not logged)",
                                        refusal_kind_name(kind))
                          : std::string()));
    return;
  }
  ++unlogged_[k];
  flush(now);
}

void RefusalLog::flush(Clock::time_point now, bool force) {
  int unlogged = 0;
  for (int u : unlogged_) unlogged += u;
  if (unlogged == 0) return;
  if (!force && seconds_between(last_summary_, now) < summary_every_s_) return;
  std::string by_kind;
  for (std::size_t k = 0; k < kRefusalKinds; ++k) {
    if (unlogged_[k] == 0) continue;
    if (!by_kind.empty()) by_kind += ", ";
    by_kind += fmt::format("{} {}", unlogged_[k], refusal_kind_name(static_cast<RefusalKind>(k)));
  }
  sink_(
      fmt::format("bootstrap: refused {} more connection{} not logged one by one ({}); {} "
                  "refused in all",
                  unlogged, unlogged == 1 ? "" : "s", by_kind, total_));
  unlogged_ = {};
  last_summary_ = now;
}

}  // namespace ibscope::bootstrap
