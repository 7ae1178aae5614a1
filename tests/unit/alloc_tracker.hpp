#pragma once
// Allocation tracking for tests that must show no allocation follows a length a peer claims.
// The global operator new is replaced for the unit-test binary (alloc_tracker.cpp); tracking
// is off unless a test turns it on, so nothing else in the binary is affected. Two scopes:
// this thread only (a decoder called directly), or every thread of the process (a server that
// runs on its own thread).

#include <cstddef>

namespace ibscope::test {

void begin_thread_allocation_tracking() noexcept;
/// Stops tracking on this thread; the largest single allocation since the begin.
std::size_t end_thread_allocation_tracking() noexcept;

/// Largest single allocation made on this thread while `f` runs.
template <typename F>
std::size_t largest_allocation_during(F&& f) {
  begin_thread_allocation_tracking();
  try {
    f();
  } catch (...) {
    end_thread_allocation_tracking();
    throw;
  }
  return end_thread_allocation_tracking();
}

/// While alive, records the largest single allocation on any thread. One at a time.
class ProcessAllocationWatch {
 public:
  ProcessAllocationWatch() noexcept;
  ~ProcessAllocationWatch();
  ProcessAllocationWatch(const ProcessAllocationWatch&) = delete;
  ProcessAllocationWatch& operator=(const ProcessAllocationWatch&) = delete;
  /// Largest single allocation since construction (or the last reset), in bytes.
  std::size_t largest() const noexcept;
  void reset() noexcept;
};

}  // namespace ibscope::test
