#include "ibscope/output/progress_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

namespace ibscope::output {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.0f} s", std::ceil(s));
  if (s < 3600) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600), std::fmod(s, 3600) / 60);
}

// Erase the whole line, back to its start (VT100: ESC [ 2 K, then carriage return).
constexpr const char* kEraseLine = "\r\x1b[2K";

}  // namespace

std::string progress_text(std::string_view what, std::size_t done, std::size_t total,
                          double elapsed_s) {
  const double pct =
      total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0;
  std::string text =
      fmt::format("[{}/{} {:3.0f} %] {}", done + 1 > total ? total : done + 1, total, pct, what);
  if (done > 0 && total > done && elapsed_s > 0) {
    const double left_s = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
    text += fmt::format("  ~{} left", duration_text(left_s));
  }
  return text;
}

ProgressLine::ProgressLine(bool enabled, std::FILE* out) noexcept : enabled_(enabled), out_(out) {}

ProgressLine::~ProgressLine() { clear(); }

bool ProgressLine::stderr_is_terminal() noexcept {
  if (::isatty(STDERR_FILENO) == 1) return true;
  // Rank 0 under the local launcher writes to a pipe that the launcher passes on to a terminal
  // (bootstrap/local_launcher.cpp sets this).
  const char* forwarded = std::getenv("IBSCOPE_PROGRESS_TTY");
  return forwarded != nullptr && std::string_view(forwarded) == "1";
}

void ProgressLine::update(std::string_view what, std::size_t done, std::size_t total) {
  if (!enabled_) return;
  if (done == 0) started_s_ = now_s();
  fmt::print(out_, "{}{}", kEraseLine, progress_text(what, done, total, now_s() - started_s_));
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::clear() noexcept {
  if (!enabled_ || !drawn_) return;
  std::fputs(kEraseLine, out_);
  std::fflush(out_);
  drawn_ = false;
}

measure::SweepProgress ProgressLine::callback() {
  if (!enabled_) return {};
  return [this](const std::string& what, std::size_t done, std::size_t total) {
    update(what, done, total);
  };
}

}  // namespace ibscope::output
