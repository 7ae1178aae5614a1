#include "ibscope/measure/row_counters.hpp"

#include <fmt/format.h>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/fabric/counter_wire.hpp"

namespace ibscope::measure {

std::vector<fabric::NicDelta> deltas_of_hosts(const std::vector<fabric::NicDelta>& all,
                                              std::string_view a, std::string_view b) {
  std::vector<fabric::NicDelta> out;
  for (const auto& d : all) {
    if (d.host == a || d.host == b) out.push_back(d);
  }
  return out;
}

RowCounters::RowCounters(bootstrap::Bootstrap& boot, bool enabled,
                         fabric::CounterReaderOptions options)
    : boot_(boot),
      enabled_(enabled),
      reader_rank_(enabled && boot.local_rank() == 0),
      reader_(std::move(options)) {}

void RowCounters::begin() {
  if (!reader_rank_) return;
  before_ = reader_.read();
  after_.reset();
}

void RowCounters::end() {
  if (reader_rank_ && before_) after_ = reader_.read();
}

std::vector<fabric::NicDelta> RowCounters::gather(std::string_view what) {
  if (!enabled_) return {};
  std::string mine;
  if (reader_rank_ && before_ && after_) {
    mine = fabric::encode_deltas(fabric::counter_deltas(*before_, *after_));
  }
  before_.reset();
  after_.reset();
  const auto blobs =
      boot_.gather(std::span(reinterpret_cast<const std::byte*>(mine.data()), mine.size()),
                   fmt::format("{}: NIC counters", what));
  std::vector<fabric::NicDelta> all;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    if (blobs[r].empty()) continue;
    const std::string_view text(reinterpret_cast<const char*>(blobs[r].data()), blobs[r].size());
    std::vector<fabric::NicDelta> host;
    try {
      host = fabric::decode_deltas(text);
    } catch (const RemoteError& e) {
      throw RemoteError(
          fmt::format("rank {} ({}): {}", r, boot_.host(static_cast<int>(r)), e.what()));
    }
    for (auto& d : host) {
      d.host = boot_.host(static_cast<int>(r));
      all.push_back(std::move(d));
    }
  }
  return all;
}

}  // namespace ibscope::measure
