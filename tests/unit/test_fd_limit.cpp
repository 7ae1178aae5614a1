// The open-file limit every ibscope raises at start (issue 35, core/fd_limit.hpp).

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>

#include "ibscope/core/fd_limit.hpp"

TEST_CASE("open-file limit: the soft limit goes to the hard one, within fs.nr_open", "[fd_limit]") {
  using ibscope::fd_limit_target;
  using ibscope::kUnlimitedFds;
  CHECK(fd_limit_target({1024, 524288}, 1048576) == 524288);
  CHECK(fd_limit_target({1024, 1024}, 1048576) == 1024);
  CHECK(fd_limit_target({1024, kUnlimitedFds}, 1048576) == 1048576);
  CHECK(fd_limit_target({1024, 4194304}, 1048576) == 1048576);
  CHECK(fd_limit_target({kUnlimitedFds, kUnlimitedFds}, 1048576) == kUnlimitedFds);  // never lower
  CHECK(ibscope::fd_count_text(kUnlimitedFds) == "unlimited");
  CHECK(ibscope::fd_count_text(20000) == "20000");
  // This process's own limit after a raise: the soft limit is as high as the kernel lets it go.
  const auto before = ibscope::fd_limit();
  std::uint64_t nr_open = 0;
  std::ifstream("/proc/sys/fs/nr_open") >> nr_open;
  const auto after = ibscope::raise_fd_limit();
  CHECK(after.soft == ibscope::fd_limit().soft);
  CHECK(after.hard == before.hard);
  if (nr_open > 0) CHECK(after.soft == fd_limit_target(before, nr_open));
}
