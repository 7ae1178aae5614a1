#pragma once
/// Ascending rank lists written as ranges, "0-7 9-9 12-15": what a job of block-placed ranks
/// sends compactly through the bootstrap (a host's ranks, a fault hook's ranks).

#include <string>
#include <string_view>
#include <vector>

namespace ibscope {

/// "0-7 9-9" for {0..7, 9}; "" for none. `ranks` ascending.
std::string format_rank_ranges(const std::vector<int>& ranks);
/// The inverse. Throws UsageError on anything but space-separated "a-b" with a <= b.
std::vector<int> parse_rank_ranges(std::string_view text);

}  // namespace ibscope
