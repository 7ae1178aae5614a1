#include "ibscope/core/rank_ranges.hpp"

#include <fmt/format.h>

#include <charconv>

#include "ibscope/core/error.hpp"

namespace ibscope {

std::string format_rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += fmt::format("{}{}-{}", out.empty() ? "" : " ", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> parse_rank_ranges(std::string_view text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ') {
      ++pos;
      continue;
    }
    const auto end = std::min(text.find(' ', pos), text.size());
    const std::string_view range = text.substr(pos, end - pos);
    const auto dash = range.find('-');
    // Each side must be a whole number: from_chars stops at the first non-digit.
    auto whole = [](std::string_view digits, int& value) {
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      return ec == std::errc{} && ptr == digits.data() + digits.size();
    };
    int first = 0, last = -1;
    const bool ok = dash != std::string_view::npos && whole(range.substr(0, dash), first) &&
                    whole(range.substr(dash + 1), last) && first >= 0 && first <= last;
    if (!ok) throw UsageError(fmt::format("'{}' is not a rank range a-b", range));
    for (int r = first; r <= last; ++r) out.push_back(r);
    pos = end;
  }
  return out;
}

}  // namespace ibscope
