// Single-core memcpy bandwidth: the ceiling a shared-memory all-reduce step is measured
// against. Two page-aligned buffers of SIZE bytes, both touched before timing; each
// repetition is one std::memcpy of SIZE bytes; the best repetition is reported as
// bytes copied / time (GB = 1e9 B). The traffic on the memory bus is about twice that (read
// + write, plus write-allocate reads where the CPU does not stream).
//
// usage: ibscope_bench_memcpy [SIZE (K/M/G, default 256M)] [REPS (default 8)]
// Output: one line "memcpy_gbps <best> size_bytes <n> reps <r> median_gbps <m>".
// Exit status: 0 success, 2 usage, 1 allocation failure.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

bool parse_size(const std::string& s, std::uint64_t& out) {
  std::size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &pos);
  } catch (...) {
    return false;
  }
  std::uint64_t mult = 1;
  if (pos < s.size()) {
    switch (s[pos]) {
      case 'k':
      case 'K':
        mult = 1ULL << 10;
        break;
      case 'm':
      case 'M':
        mult = 1ULL << 20;
        break;
      case 'g':
      case 'G':
        mult = 1ULL << 30;
        break;
      default:
        return false;
    }
    ++pos;
    if (pos < s.size() && (s[pos] == 'B' || s[pos] == 'b')) ++pos;
  }
  if (pos != s.size() || v == 0) return false;
  out = v * mult;
  return true;
}

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t bytes = 256ULL << 20;
  long reps = 8;
  if (argc > 3 || (argc > 1 && !parse_size(argv[1], bytes)) ||
      (argc > 2 && (reps = std::atol(argv[2])) < 1)) {
    std::fprintf(stderr, "usage: %s [SIZE (K/M/G, default 256M)] [REPS (default 8)]\n", argv[0]);
    return 2;
  }
  const auto n = static_cast<std::size_t>(bytes);
  void* a = nullptr;
  void* b = nullptr;
  if (posix_memalign(&a, 4096, n) != 0 || posix_memalign(&b, 4096, n) != 0) {
    std::fprintf(stderr, "memcpy_bw: cannot allocate 2 x %zu bytes\n", n);
    return 1;
  }
  std::unique_ptr<void, FreeDeleter> src(a), dst(b);
  // Touch every page so page faults are not timed.
  std::memset(src.get(), 1, n);
  std::memset(dst.get(), 0, n);
  std::memcpy(dst.get(), src.get(), n);

  std::vector<double> gbps;
  gbps.reserve(static_cast<std::size_t>(reps));
  for (long r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.get(), src.get(), n);
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    gbps.push_back(static_cast<double>(n) / s / 1e9);
    // Keep the copy observable so it is not elided.
    if (static_cast<volatile unsigned char*>(dst.get())[n / 2] != 1) return 1;
  }
  std::sort(gbps.begin(), gbps.end());
  std::printf("memcpy_gbps %.3f size_bytes %zu reps %ld median_gbps %.3f\n", gbps.back(), n, reps,
              gbps[gbps.size() / 2]);
  return 0;
}
