// The launcher, the store server thread and the bootstrap reader threads together, as one real
// job of tsan_job processes. Built with -fsanitize=thread (tests/tsan/CMakeLists.txt): a data
// race in any rank or in the launcher makes that process exit non-zero (TSAN_OPTIONS
// halt_on_error=1), which fails the job; the test also checks that every line every rank
// printed arrives once, whole, with the right prefix.

#include <fmt/format.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <string>

namespace {

struct JobOutput {
  int status = -1;
  std::map<std::string, int> lines;  ///< line -> times seen

  int times_seen(const std::string& line) const {
    const auto it = lines.find(line);
    return it == lines.end() ? 0 : it->second;
  }
};

JobOutput run_job(int np, int rounds, int lines) {
  const std::string cmd =
      fmt::format("{} --np {} --rounds {} --lines {} 2>&1", TSAN_JOB_BINARY, np, rounds, lines);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  JobOutput out;
  std::string line;
  for (int c = std::fgetc(pipe); c != EOF; c = std::fgetc(pipe)) {
    if (c == '\n') {
      ++out.lines[line];
      line.clear();
    } else {
      line.push_back(static_cast<char>(c));
    }
  }
  if (!line.empty()) ++out.lines[line];
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return out;
}

}  // namespace

TEST_CASE("tsan job: launcher, store server and bootstrap readers run race-free", "[tsan]") {
  constexpr int kRanks = 4;
  constexpr int kLines = 300;
  const JobOutput out = run_job(kRanks, 60, kLines);
  INFO("exit status " << out.status << "; " << out.lines.size() << " distinct lines");
  for (const auto& [text, count] : out.lines) {
    if (text.find("ThreadSanitizer") != std::string::npos) FAIL_CHECK(text);
  }
  CHECK(out.status == 0);
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string prefix = rank == 0 ? "" : fmt::format("[rank {}] ", rank);
    // Rank 0's stdout passes through; its stderr and every other rank's output is prefixed.
    const std::string err_prefix = fmt::format("[rank {}] ", rank);
    for (int i = 0; i < kLines; i += 37) {
      const auto out_line = fmt::format("{}out line {} of rank {}", prefix, i, rank);
      const auto err_line = fmt::format("{}err line {} of rank {}", err_prefix, i, rank);
      CHECK(out.times_seen(out_line) == 1);
      CHECK(out.times_seen(err_line) == 1);
    }
    CHECK(out.times_seen(fmt::format("{}rank {} done, wrong 0", prefix, rank)) == 1);
  }
}
