#pragma once
/// Send-queue accounting for one QP with selective signalling: every `signal_every`-th work
/// request is signalled and its completion retires all the unsignalled ones before it. The
/// count a signalled completion retires travels in its wr_id, beside the QP index.

#include <algorithm>
#include <cstdint>
#include <utility>

namespace ibscope::probes {

inline std::uint64_t encode_wr_id(int qp, int retires) noexcept {
  return (static_cast<std::uint64_t>(qp) << 32) | static_cast<std::uint32_t>(retires);
}
inline int wr_id_qp(std::uint64_t wr_id) noexcept { return static_cast<int>(wr_id >> 32); }
inline int wr_id_retires(std::uint64_t wr_id) noexcept {
  return static_cast<int>(wr_id & 0xffffffffu);
}

struct SendWindow {
  int depth = 1;         // send queue slots
  int signal_every = 1;  // <= depth, else the queue fills with nothing to retire it
  int in_flight = 0;     // posted, not yet retired
  int unsignalled = 0;   // posted since the last signalled one

  SendWindow(int depth_, int signal_every_)
      : depth(std::max(depth_, 1)),
        signal_every(std::clamp(signal_every_, 1, std::max(depth_, 1))) {}

  bool full() const noexcept { return in_flight >= depth; }
  /// Whether the next post must be signalled; `last` forces it (the end of a stream).
  bool next_signalled(bool last) const noexcept { return last || unsignalled + 1 >= signal_every; }
  /// Records a post; returns how many WRs its completion will retire (0 if unsignalled).
  int posted(bool signalled) noexcept {
    ++in_flight;
    ++unsignalled;
    if (!signalled) return 0;
    return std::exchange(unsignalled, 0);
  }
  void retired(int count) noexcept { in_flight -= count; }
};

}  // namespace ibscope::probes
