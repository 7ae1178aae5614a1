#include "ibscope/core/closed_stdout.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope {
namespace {

std::atomic<bool> g_stdout_closed{false};
std::atomic<bool> g_stdout_tolerant{false};

// fopencookie's write function: stdio hands it what it buffered. Whatever the reader no longer
// takes counts as written, so stdio (and fmt::print, which throws on a short fwrite) never sees
// an error for it.
ssize_t write_stdout_cookie(void*, const char* buf, std::size_t size) {
  if (!write_stdout(std::string_view(buf, size))) return 0;  // stdio marks the stream in error
  return static_cast<ssize_t>(size);
}

}  // namespace

bool write_stdout(std::string_view text) noexcept {
  while (!text.empty()) {
    if (g_stdout_closed.load(std::memory_order_relaxed)) return true;
    const ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n > 0) {
      text.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      errno = EIO;  // nothing written, no error said: give up rather than spin
      return false;
    }
    if (errno == EINTR) continue;  // the interrupt handlers are not SA_RESTART
    if (errno != EPIPE) return false;
    if (!g_stdout_closed.exchange(true)) {
      try {
        log::warn(
            "standard output was closed by its reader: nothing more is printed there; the run "
            "goes on and writes its results file");
      } catch (...) {
        // No memory for the note: the output is dropped all the same.
      }
    }
  }
  return true;
}

bool stdout_closed() noexcept { return g_stdout_closed.load(std::memory_order_relaxed); }

void tolerate_closed_stdout() {
  if (g_stdout_tolerant.load()) return;
  // A write to a pipe without a reader then fails with EPIPE instead of killing the process.
  // SIG_IGN survives exec: the local launcher's ranks inherit it (and set it again themselves).
  ::signal(SIGPIPE, SIG_IGN);
  std::fflush(stdout);
  cookie_io_functions_t io{};
  io.write = write_stdout_cookie;
  FILE* stream = ::fopencookie(nullptr, "w", io);
  if (stream == nullptr) throw SystemError("standard output: fopencookie", errno);
  // stdio's own choice for fd 1: a cookie stream has no descriptor to look at.
  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  std::setvbuf(stream, nullptr, terminal ? _IOLBF : _IOFBF, BUFSIZ);
  // glibc lets a program assign stdout; exit() flushes this stream as it would the original.
  stdout = stream;
  g_stdout_tolerant.store(true);
}

}  // namespace ibscope
