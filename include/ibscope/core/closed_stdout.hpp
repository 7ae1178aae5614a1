#pragma once
/// Standard output whose reader may go away (`ibscope allreduce ... | head`, issue 35): the run
/// must neither die of SIGPIPE nor stop on EPIPE. The first write to fd 1 that fails with EPIPE
/// prints one note on stderr; every later write to standard output is dropped, and the run goes
/// on to write its results file and exit as it would have.

#include <string_view>

namespace ibscope {

/// Ignores SIGPIPE and makes `stdout` a stream whose writes go through write_stdout(), buffered
/// as stdio would have buffered fd 1 (by lines on a terminal, else fully). Idempotent. Call it
/// before anything is written to `stdout` (what was buffered is flushed first); std::cout is not
/// redirected. Throws SystemError when the stream cannot be made.
void tolerate_closed_stdout();

/// Writes all of `text` to fd 1 (retrying EINTR and short writes). Once the reader is gone
/// (EPIPE), returns true and drops the text: the first time, it logs the note on stderr. Returns
/// false, with errno set, on any other error. Not async-signal-safe (the note is a log line).
bool write_stdout(std::string_view text) noexcept;

/// Whether the reader of standard output went away (a write got EPIPE).
bool stdout_closed() noexcept;

}  // namespace ibscope
