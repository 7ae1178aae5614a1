#pragma once
// What the ranks of an in-process job threw (transport/inproc: run_ranks), for a test's message.

#include <fmt/format.h>

#include <exception>
#include <string>
#include <vector>

namespace ibscope::test {

/// "rank R: what" of the first rank that threw, or "" when none did.
inline std::string first_rank_error(const std::vector<std::exception_ptr>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      return fmt::format("rank {}: {}", r, e.what());
    } catch (...) {
      return fmt::format("rank {}: an exception that is no std::exception", r);
    }
  }
  return {};
}

}  // namespace ibscope::test
