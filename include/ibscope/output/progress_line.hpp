#pragma once
/// One status line on stderr during long sweeps — what runs now, how far, and the estimated
/// time left — redrawn in place. Drawn only when enabled (rank 0, stderr a terminal, not
/// --quiet); otherwise every call does nothing, so logs and pipes never see it.

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include "ibscope/measure/sweep.hpp"

namespace ibscope::output {

/// The line's text (pure): "[12/60  20 %] allreduce ring float sum 4 MiB  ~35 s left".
/// The estimate is elapsed / done x (total - done); none before the first step is done.
std::string progress_text(std::string_view what, std::size_t done, std::size_t total,
                          double elapsed_s);

class ProgressLine {
 public:
  /// `enabled` false: a no-op line. `out` is where it draws (stderr).
  explicit ProgressLine(bool enabled, std::FILE* out = stderr) noexcept;
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();  ///< clears the line

  /// Whether stderr is a terminal (isatty), or a pipe the local launcher passes on to one
  /// (IBSCOPE_PROGRESS_TTY=1): the usual `enabled`, with rank 0 and not --quiet.
  static bool stderr_is_terminal() noexcept;

  /// Draws the step about to run (restarts the clock when `done` is 0).
  void update(std::string_view what, std::size_t done, std::size_t total);
  /// Erases the line (before printing table rows, so they never mix with it).
  void clear() noexcept;
  /// A SweepProgress that draws on this line (empty when disabled).
  measure::SweepProgress callback();

 private:
  bool enabled_;
  std::FILE* out_;
  bool drawn_ = false;
  double started_s_ = 0;
};

}  // namespace ibscope::output
