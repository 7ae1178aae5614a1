#include "ibscope/core/collective_kind.hpp"

namespace ibscope {

std::string_view name_of(Collective c) noexcept {
  switch (c) {
    case Collective::kAllreduce:
      return "allreduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllgather:
      return "allgather";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "?";
}

std::optional<Collective> collective_named(std::string_view name) noexcept {
  for (Collective c : kAllCollectives) {
    if (name_of(c) == name) return c;
  }
  return std::nullopt;
}

double busbw_factor(Collective c, int p) noexcept {
  if (p <= 1) return 0;
  switch (c) {
    case Collective::kAllreduce:
      return 2.0 * (p - 1) / p;
    case Collective::kReduceScatter:
    case Collective::kAllgather:
      return static_cast<double>(p - 1) / p;
    case Collective::kBroadcast:
      return 1.0;
  }
  return 0;
}

bool reduces(Collective c) noexcept {
  return c == Collective::kAllreduce || c == Collective::kReduceScatter;
}

}  // namespace ibscope
