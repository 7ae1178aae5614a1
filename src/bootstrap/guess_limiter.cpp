#include "ibscope/bootstrap/guess_limiter.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace ibscope::bootstrap {
namespace {

// Forgetting the sources whose budget is whole again costs a pass over the table: at most
// this often, so that an attacker with many addresses cannot make every hello pay for it.
constexpr double kForgetEveryS = 1.0;

}  // namespace

std::string guess_source(std::string_view peer) {
  const auto colon = peer.rfind(':');
  if (colon == std::string_view::npos) return std::string(peer);
  std::string host(peer.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  std::array<unsigned char, 16> a{};
  if (::inet_pton(AF_INET6, host.c_str(), a.data()) != 1) return host;  // IPv4, or a name
  const bool v4_mapped = std::all_of(a.begin(), a.begin() + 10, [](auto b) { return b == 0; }) &&
                         a[10] == 0xff && a[11] == 0xff;
  if (v4_mapped) return fmt::format("{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
  std::fill(a.begin() + 8, a.end(), 0);
  std::array<char, INET6_ADDRSTRLEN> text{};
  ::inet_ntop(AF_INET6, a.data(), text.data(), text.size());
  return fmt::format("{}/64", text.data());
}

GuessLimiter::GuessLimiter(Budget budget) : budget_(budget) {
  budget_.burst = std::max(1.0, budget_.burst);  // below one try, no hello could ever be checked
}

void GuessLimiter::refill(Bucket& b, Clock::time_point now) const {
  if (now <= b.at) return;
  b.tries = std::min(budget_.burst, b.tries + budget_.per_s * seconds_between(b.at, now));
  b.at = now;
}

void GuessLimiter::forget_refilled(Clock::time_point now) {
  if (seconds_between(last_forget_, now) < kForgetEveryS) return;
  last_forget_ = now;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    refill(it->second, now);
    it = it->second.tries >= budget_.burst ? buckets_.erase(it) : std::next(it);
  }
}

GuessLimiter::Bucket* GuessLimiter::find(const std::string& source, Clock::time_point now,
                                         bool create) {
  auto it = buckets_.find(source);
  if (it == buckets_.end()) {
    if (!create) return nullptr;
    if (buckets_.size() >= budget_.max_sources) forget_refilled(now);
    if (buckets_.size() >= budget_.max_sources) {
      if (!shared_started_) {
        shared_ = Bucket{budget_.burst, now};
        shared_started_ = true;
      }
      refill(shared_, now);
      return &shared_;
    }
    it = buckets_.emplace(source, Bucket{budget_.burst, now}).first;
  }
  refill(it->second, now);
  return &it->second;
}

bool GuessLimiter::may_try(const std::string& source, Clock::time_point now) {
  // An untracked source's budget is whole; a full table sends new sources to the shared one.
  Bucket* b = find(source, now, buckets_.size() >= budget_.max_sources);
  return b == nullptr || b->tries >= 1.0;
}

void GuessLimiter::spend(const std::string& source, Clock::time_point now) {
  Bucket* b = find(source, now, true);
  b->tries = std::max(0.0, b->tries - 1.0);
}

double GuessLimiter::wait_s(const std::string& source, Clock::time_point now) {
  Bucket* b = find(source, now, buckets_.size() >= budget_.max_sources);
  if (b == nullptr || b->tries >= 1.0) return 0.0;
  if (budget_.per_s <= 0) return INFINITY;
  return (1.0 - b->tries) / budget_.per_s;
}

}  // namespace ibscope::bootstrap
