#pragma once
// Internal to accept/congestion: the tags of the congestion phase. Victims and congestors are
// disjoint, so congestor data never meets a victim's receive; the operation sequences are ones
// the collectives reach only after thousands of operations, and every message of one window is
// received before the next window starts, so a later reuse of the same value cannot match a
// stale message.

#include <cstdint>

#include "ibscope/transport/comm.hpp"

namespace ibscope::accept::congestion {

inline constexpr std::uint32_t kPingPongSeq = 0xffc;  // victim pairs' ping-pong
inline constexpr std::uint32_t kDataSeq = 0xffd;      // congestor data, step = round
inline constexpr std::uint32_t kControlSeq = 0xffe;   // the steps below

inline constexpr std::uint32_t kGoOnStep = 1;     // congestor leader -> congestors, per round
inline constexpr std::uint32_t kStartedStep = 2;  // congestor leader -> victims: load is on
inline constexpr std::uint32_t kDoneStep = 3;     // victim -> victim leader: window measured
inline constexpr std::uint32_t kStopStep = 4;     // victim leader -> congestor leader

}  // namespace ibscope::accept::congestion
