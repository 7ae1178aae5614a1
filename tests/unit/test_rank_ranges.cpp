#include <catch2/catch.hpp>

#include "ibscope/core/error.hpp"
#include "ibscope/core/rank_ranges.hpp"

using ibscope::format_rank_ranges;
using ibscope::parse_rank_ranges;

TEST_CASE("rank ranges: block-placed ranks are one range per host", "[rank_ranges]") {
  CHECK(format_rank_ranges({}).empty());
  CHECK(format_rank_ranges({3}) == "3-3");
  CHECK(format_rank_ranges({0, 1, 2, 3, 4, 5, 6, 7}) == "0-7");
  CHECK(format_rank_ranges({0, 1, 2, 5, 7, 8}) == "0-2 5-5 7-8");
  for (const std::vector<int>& ranks : {std::vector<int>{},
                                        {0},
                                        {10744, 10745, 10746, 10747, 10748, 10749, 10750, 10751},
                                        {1, 3, 5, 6}}) {
    CHECK(parse_rank_ranges(format_rank_ranges(ranks)) == ranks);
  }
}

TEST_CASE("rank ranges: malformed text is refused", "[rank_ranges]") {
  for (const char* bad : {"5", "5-", "-5", "3-1", "a-b", "1-2x", "1--2"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_rank_ranges(bad), ibscope::UsageError);
  }
  CHECK(parse_rank_ranges("  0-1   4-4 ") == std::vector<int>{0, 1, 4});
}
