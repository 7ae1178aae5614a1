#pragma once
/// A budget of wrong job tokens per source address, for the TCP store (issue 35). Without one,
/// a stranger could have ~5,000 tokens a second checked on 2 cores. With it, each source gets
/// `burst` verdicts at once and then `per_s` a second; past that, the store refuses the
/// source's hellos as busy without looking at the token, so that a right guess is not
/// recognised either and parallel connections buy nothing. Only wrong (or empty) tokens spend
/// the budget: a thousand ranks of one host, all with the right token, never meet it.
///
/// A source is an IPv4 address or an IPv6 /64 (a host usually holds a whole /64). The table
/// holds at most `max_sources` sources with budget spent; past that, new sources share one
/// budget, so memory stays bounded however many addresses an attacker has. Pure: time is
/// passed in; single-threaded (the store's thread).

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ibscope/core/clock.hpp"

namespace ibscope::bootstrap {

/// The source a peer "ip:port" (as net::peer_name writes it, IPv6 without brackets) is
/// limited as: "192.0.2.7"; "2001:db8:1:2::/64"; an IPv4-mapped IPv6 address as its IPv4
/// address. Text that does not parse is its own source. Pure.
std::string guess_source(std::string_view peer);

class GuessLimiter {
 public:
  struct Budget {
    double burst = 10;               ///< wrong tokens a source may have checked at once
    double per_s = 1;                ///< and then this many a second
    std::size_t max_sources = 4096;  ///< sources tracked one by one
  };

  explicit GuessLimiter(Budget budget);

  /// Whether a hello from `source` may have its token checked now.
  bool may_try(const std::string& source, Clock::time_point now);
  /// Spends one try of `source`'s budget: its token was wrong or empty.
  void spend(const std::string& source, Clock::time_point now);
  /// Seconds until `source` may try again; 0 when it may now.
  double wait_s(const std::string& source, Clock::time_point now);
  /// Sources tracked one by one now (for tests).
  std::size_t tracked() const noexcept { return buckets_.size(); }

 private:
  struct Bucket {
    double tries = 0;  // left at `at`
    Clock::time_point at{};
  };
  // The source's bucket, refilled up to `now`; `create` adds one (or falls back to the shared
  // one) for a source not yet tracked. nullptr: untracked, its budget is whole.
  Bucket* find(const std::string& source, Clock::time_point now, bool create);
  void refill(Bucket& b, Clock::time_point now) const;
  void forget_refilled(Clock::time_point now);

  Budget budget_;
  std::unordered_map<std::string, Bucket> buckets_;
  Bucket shared_;  // for new sources while the table is full
  bool shared_started_ = false;
  Clock::time_point last_forget_{};
};

}  // namespace ibscope::bootstrap
