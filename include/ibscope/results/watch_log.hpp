#pragma once
/// `ibscope watch --log FILE`: one JSON object per line, one line per interval of the node
/// (docs/counters.md, "ibscope watch", lists the fields). Each line goes to the file with one
/// write(2) as soon as its interval ends, so a crash or kill of the watch keeps every line
/// written before it (no fsync: a crash of the host may lose the last lines).

#include <string>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/fabric/watch_state.hpp"

namespace ibscope::results {

/// One interval as a JSON line (ends with '\n'): host, time_utc (ms), unix_time_s, elapsed_s,
/// interval_s, nics[] (nic, driver, bytes, bytes_per_s, errors, congestion, flaps, counters[]
/// of {source, name, kind, delta[, saturated][, reset]}; appeared/vanished when true) and
/// findings[] of {kind, nic, detail}.
std::string watch_log_line(const fabric::WatchInterval& interval, const std::string& host,
                           double unix_time_s, double elapsed_s);

/// The log file, open for appending. Without `append` the file must not exist (a log is a
/// result: never overwritten); with it, lines go after what is there. Throws SystemError
/// (EEXIST: "exists; --append adds to it").
class WatchLog {
 public:
  WatchLog(const std::string& path, bool append);
  /// Writes `line` whole (one write(2), retried on a short write). Throws SystemError.
  void write(const std::string& line);
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  bootstrap::net::Fd fd_;
};

}  // namespace ibscope::results
