#include "ibscope/transport/transports.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"

namespace ibscope::transport {

// Each implementation's registration, defined in its own folder.
TransportInfo ucx_transport();

std::span<const TransportInfo> transports() {
  static const std::vector<TransportInfo> all{ucx_transport()};
  return all;
}

const TransportInfo& data_transport() { return transports().front(); }

const TransportInfo& find_transport(std::string_view name) {
  std::string names;
  for (const TransportInfo& t : transports()) {
    if (t.name == name) return t;
    names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
  }
  throw UsageError(fmt::format("unknown transport '{}' (known: {})", name, names));
}

}  // namespace ibscope::transport
