#pragma once
/// `ibscope watch --log FILE`: one JSON object per line, one line per interval of the node
/// (docs/counters.md, "ibscope watch", lists the fields). Each line goes to the file with one
/// write(2) as soon as its interval ends, so a crash or kill of the watch keeps every line
/// written before it (no fsync: a crash of the host may lose the last lines).

#include <cstdint>
#include <string>
#include <vector>

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

/// A log read back (`ibscope report` charts it): per line the figures the charts use.
struct WatchLogNic {
  std::string nic, driver;
  double bytes_per_s = 0;
  std::uint64_t errors = 0, congestion = 0, flaps = 0;
};
struct WatchLogFinding {
  std::string kind, nic, detail;
};
struct WatchLogLine {
  std::string host;
  double unix_time_s = 0, interval_s = 0;
  std::vector<WatchLogNic> nics;
  std::vector<WatchLogFinding> findings;
};

/// Every line of a watch log, in order (several runs appended: their times go on). Throws
/// UsageError naming the file and line of a malformed one, or a file that cannot be read.
std::vector<WatchLogLine> load_watch_log(const std::string& path);

}  // namespace ibscope::results
