// Distinct hosts from per-rank hostnames: each name once, in first-appearance order, counted.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ibscope/core/hosts.hpp"

using ibscope::count_hosts;
using ibscope::distinct_hosts;

TEST_CASE("distinct_hosts: an empty job has no hosts", "[hosts]") {
  const std::vector<std::string> none;
  CHECK(distinct_hosts(none).empty());
  CHECK(count_hosts(none) == 0);
}

TEST_CASE("distinct_hosts: one host for every rank", "[hosts]") {
  const std::vector<std::string> ranks(8, "node-a");
  CHECK(distinct_hosts(ranks) == std::vector<std::string>{"node-a"});
  CHECK(count_hosts(ranks) == 1);
}

TEST_CASE("distinct_hosts: first-appearance order, not sorted", "[hosts]") {
  // Ranks interleaved across hosts (round-robin placement), names out of alphabetical order.
  const std::vector<std::string> ranks{"n2", "n1", "n3", "n2", "n1", "n3", "n1"};
  CHECK(distinct_hosts(ranks) == std::vector<std::string>{"n2", "n1", "n3"});
  CHECK(count_hosts(ranks) == 3);
}

TEST_CASE("distinct_hosts: block placement and one rank per host", "[hosts]") {
  const std::vector<std::string> block{"a", "a", "b", "b", "c", "c"};
  CHECK(distinct_hosts(block) == std::vector<std::string>{"a", "b", "c"});
  const std::vector<std::string> one_each{"z", "y", "x"};
  CHECK(distinct_hosts(one_each) == one_each);
  CHECK(count_hosts(one_each) == 3);
}

TEST_CASE("distinct_hosts: names differ by case and by suffix", "[hosts]") {
  // Hostnames are compared as given: no case folding, no domain stripping.
  const std::vector<std::string> ranks{"Node", "node", "node.example", "node"};
  CHECK(count_hosts(ranks) == 3);
  CHECK(distinct_hosts(ranks) == std::vector<std::string>{"Node", "node", "node.example"});
}
