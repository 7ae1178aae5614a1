#include "alloc_tracker.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
thread_local bool g_track_thread = false;
thread_local std::size_t g_largest_on_thread = 0;
std::atomic<bool> g_track_process{false};
std::atomic<std::size_t> g_largest_in_process{0};

void* tracked_alloc(std::size_t n) {
  if (g_track_thread && n > g_largest_on_thread) g_largest_on_thread = n;
  if (g_track_process.load(std::memory_order_relaxed)) {
    std::size_t seen = g_largest_in_process.load(std::memory_order_relaxed);
    while (n > seen && !g_largest_in_process.compare_exchange_weak(seen, n)) {
    }
  }
  if (void* p = std::malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace ibscope::test {

void begin_thread_allocation_tracking() noexcept {
  g_largest_on_thread = 0;
  g_track_thread = true;
}

std::size_t end_thread_allocation_tracking() noexcept {
  g_track_thread = false;
  return g_largest_on_thread;
}

ProcessAllocationWatch::ProcessAllocationWatch() noexcept {
  reset();
  g_track_process.store(true);
}
ProcessAllocationWatch::~ProcessAllocationWatch() { g_track_process.store(false); }
std::size_t ProcessAllocationWatch::largest() const noexcept { return g_largest_in_process.load(); }
void ProcessAllocationWatch::reset() noexcept { g_largest_in_process.store(0); }

}  // namespace ibscope::test

// Every non-aligned form is replaced, so that new and delete always pair up (a sanitizer
// runtime would otherwise supply the forms left out, and flag the mismatch). The aligned forms
// are left to the library, on both sides.
void* operator new(std::size_t n) { return tracked_alloc(n); }
void* operator new[](std::size_t n) { return tracked_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return tracked_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
