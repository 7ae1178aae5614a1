// A job made only of ibscope's multi-threaded parts, for ThreadSanitizer (tests/tsan/README.md):
// the local launcher (forks the ranks, forwards their output), the TCP store server thread in
// rank 0 and the bootstrap's reader thread in every rank.
//
//   tsan_job --np N --rounds R --lines L   launches N ranks of itself through the launcher
//   (as a rank, from the launcher's environment)  R verified allgathers + barriers, L lines on
//                                          stdout and on stderr, interleaved with the rounds
//
// Each rank exits non-zero when a gathered contribution is not what its peer sent; the test
// (test_tsan_job.cpp) checks the forwarded lines and the exit status.

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/bootstrap/launch_env.hpp"
#include "ibscope/bootstrap/local_launcher.hpp"
#include "ibscope/core/error.hpp"

namespace {

struct JobArgs {
  int np = 3;
  int rounds = 50;
  int lines = 200;
};

JobArgs parse_args(int argc, char** argv) {
  JobArgs a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--np")
      a.np = value;
    else if (flag == "--rounds")
      a.rounds = value;
    else if (flag == "--lines")
      a.lines = value;
    else
      throw ibscope::UsageError(fmt::format("tsan_job: unknown flag {}", flag));
  }
  if (a.np < 1 || a.rounds < 0 || a.lines < 0) throw ibscope::UsageError("tsan_job: bad counts");
  return a;
}

ibscope::bootstrap::Bytes contribution(int rank, int round) {
  const std::string text = fmt::format(
      "rank {} round {} {}", rank, round,
      std::string(static_cast<std::size_t>(round % 7) * 100, static_cast<char>('a' + rank % 26)));
  ibscope::bootstrap::Bytes b(text.size());
  std::memcpy(b.data(), text.data(), text.size());
  return b;
}

int run_rank(const JobArgs& a) {
  const auto env = ibscope::bootstrap::detect_launch_from_process_env();
  auto boot = ibscope::bootstrap::connect_bootstrap(env, 60.0);
  const int rank = boot->rank();
  int wrong = 0;
  int printed = 0;
  for (int round = 0; round < a.rounds; ++round) {
    const auto all = boot->allgather(contribution(rank, round), "tsan allgather");
    for (int peer = 0; peer < boot->size(); ++peer) {
      if (all.at(static_cast<std::size_t>(peer)) != contribution(peer, round)) ++wrong;
    }
    if (round % 10 == 9) boot->barrier("tsan barrier");
    // Spread the lines over the rounds so output and store traffic interleave.
    const int until = a.rounds == 0 ? a.lines : a.lines * (round + 1) / a.rounds;
    for (; printed < until; ++printed) {
      fmt::print(stdout, "out line {} of rank {}\n", printed, rank);
      fmt::print(stderr, "err line {} of rank {}\n", printed, rank);
    }
    std::fflush(stdout);
  }
  for (; printed < a.lines; ++printed) {
    fmt::print(stdout, "out line {} of rank {}\n", printed, rank);
    fmt::print(stderr, "err line {} of rank {}\n", printed, rank);
  }
  boot->barrier("tsan final barrier");
  fmt::print(stdout, "rank {} done, wrong {}\n", rank, wrong);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const JobArgs args = parse_args(argc, argv);
    if (std::getenv("IBSCOPE_RANK") != nullptr) return run_rank(args);
    std::vector<std::string> child_argv(argv, argv + argc);
    return ibscope::bootstrap::run_local_launcher(
        ibscope::bootstrap::LocalLaunchOptions{args.np, 60.0, child_argv});
  } catch (const std::exception& e) {
    fmt::print(stderr, "tsan_job: {}\n", e.what());
    return 1;
  }
}
