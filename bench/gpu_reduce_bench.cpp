// GPU reduction kernel throughput beside device-to-device copy bandwidth and the device's peak
// memory bandwidth: what a GPU-buffer all-reduce's reduction step costs next to moving the same
// bytes. Needs a CUDA build and a GPU.
//
// Per size (1 MiB, 2 MiB, ... MAX), on device DEVICE:
//   reduce: reduce_async(TYPE, OP, dst, a, b) on three SIZE-byte buffers; the device moves
//           3 x SIZE bytes per call (reads a and b, writes dst): reduce_gbps = 3 x SIZE / time;
//   copy:   cudaMemcpy device to device (ibscope::gpu::copy) of SIZE bytes; it moves 2 x SIZE
//           bytes (read + write): copy_gbps = 2 x SIZE / time;
//   peak:   2 x memory clock x bus width from the device attributes (device_info).
// Each figure: the best of REPS timed batches; a batch is enough back-to-back calls on one
// stream to take about 20 ms (launch overhead included, as ibscope pays it), timed on the host
// from the first enqueue to the stream's completion. GB/s = 1e9 B/s.
//
// usage: ibscope_bench_gpu_reduce [--max SIZE (K/M/G, default 1G)] [--type T (default float)]
//                                 [--op O (default sum)] [--device N (default 0)] [--reps R (5)]
// Output: a banner (device, peak, CUDA runtime), a table with units in its headers, and a last
// line "gpu_reduce_gbps <g> copy_gbps <g> peak_gbps <p> size_bytes <n>" (the largest size) for
// scripts.
// Exit status: 0 success, 2 usage, 1 no GPU or a CUDA failure (the message names the call).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/gpu/cuda.hpp"

namespace {

namespace gpu = ibscope::gpu;
using Clock = std::chrono::steady_clock;

constexpr double kBatchSeconds = 0.02;
constexpr std::uint64_t kMinBytes = 1ULL << 20;

struct Options {
  std::uint64_t max_bytes = 1ULL << 30;
  ibscope::DataType type = ibscope::DataType::kFloat32;
  ibscope::ReduceOp op = ibscope::ReduceOp::kSum;
  int device = 0;
  int reps = 5;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) throw ibscope::UsageError(fmt::format("{} needs a value", flag));
    const std::string value = argv[++i];
    if (flag == "--max") {
      o.max_bytes = ibscope::units::parse_size_bytes(value, "--max");
      if (o.max_bytes < kMinBytes) throw ibscope::UsageError("--max: at least 1M");
    } else if (flag == "--type") {
      o.type = ibscope::parse_data_type(value);
    } else if (flag == "--op") {
      o.op = ibscope::parse_reduce_op(value);
    } else if (flag == "--device") {
      o.device = std::stoi(value);
    } else if (flag == "--reps") {
      o.reps = std::max(1, std::stoi(value));
    } else {
      throw ibscope::UsageError(fmt::format("unknown option '{}'", flag));
    }
  }
  return o;
}

// Best seconds per call over `reps` batches of `enqueue` calls, each batch sized to take about
// kBatchSeconds (from one call's time after a warm-up).
double best_seconds_per_call(const std::function<void()>& enqueue, gpu::Stream& stream, int reps) {
  enqueue();  // warm-up: first launch, page mapping
  stream.synchronize();
  auto t0 = Clock::now();
  enqueue();
  stream.synchronize();
  const double one = std::chrono::duration<double>(Clock::now() - t0).count();
  const long calls = std::clamp(static_cast<long>(kBatchSeconds / std::max(one, 1e-7)), 1L, 10000L);
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    t0 = Clock::now();
    for (long c = 0; c < calls; ++c) enqueue();
    stream.synchronize();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s / static_cast<double>(calls));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr,
               "gpu_reduce_bench: {}\nusage: {} [--max SIZE (default 1G)] [--type T] [--op O] "
               "[--device N] [--reps R]\n",
               e.what(), argv[0]);
    return 2;
  }
  try {
    const int count = gpu::device_count();
    if (o.device < 0 || o.device >= count) {
      throw ibscope::UsageError(fmt::format("--device {}: {} device(s) visible", o.device, count));
    }
    const gpu::DeviceInfo info = gpu::device_info(o.device);
    gpu::set_device(o.device);
    fmt::print("# device {}: {} ({}), {} memory, peak {:.0f} GB/s; CUDA runtime {}\n", o.device,
               info.name, info.pci_bus_id, ibscope::units::format_size(info.total_bytes),
               info.memory_bw_gbps, gpu::runtime_version());
    fmt::print(
        "# reduce: {} {}, 3 x size bytes moved per call; copy: device to device, 2 x size;"
        " best of {} batches of ~{:.0f} ms; GB/s = 1e9 B/s\n",
        ibscope::name_of(o.type), ibscope::name_of(o.op), o.reps, kBatchSeconds * 1e3);

    const std::size_t max_bytes = static_cast<std::size_t>(o.max_bytes);
    gpu::DeviceMemory a(max_bytes, o.device), b(max_bytes, o.device), dst(max_bytes, o.device);
    gpu::Stream stream;
    // Defined inputs: zeros (no NaN or denormal operands to slow or skew anything).
    std::vector<std::byte> zeros(std::min<std::size_t>(max_bytes, 64 << 20));
    for (std::size_t off = 0; off < max_bytes; off += zeros.size()) {
      const std::size_t n = std::min(zeros.size(), max_bytes - off);
      gpu::copy(a.data() + off, zeros.data(), n);
      gpu::copy(b.data() + off, zeros.data(), n);
    }

    fmt::print("{:>12} {:>14} {:>16} {:>12} {:>14} {:>14} {:>14}\n", "size", "reduce_time_us",
               "reduce_gbps(3x)", "copy_time_us", "copy_gbps(2x)", "reduce/copy_%",
               "reduce/peak_%");
    double last_reduce = 0, last_copy = 0;
    std::size_t last_bytes = 0;
    for (std::size_t bytes = kMinBytes; bytes <= max_bytes; bytes *= 2) {
      const std::size_t elements = bytes / ibscope::size_of(o.type);
      last_bytes = bytes;
      const double t_reduce = best_seconds_per_call(
          [&] {
            gpu::reduce_async(o.type, o.op, dst.data(), a.data(), b.data(), elements, stream);
          },
          stream, o.reps);
      const double t_copy = best_seconds_per_call(
          [&] { gpu::copy_async(dst.data(), a.data(), bytes, stream); }, stream, o.reps);
      last_reduce = ibscope::units::to_gb_per_s(3.0 * static_cast<double>(bytes), t_reduce);
      last_copy = ibscope::units::to_gb_per_s(2.0 * static_cast<double>(bytes), t_copy);
      fmt::print("{:>12} {:>14.2f} {:>16.1f} {:>12.2f} {:>14.1f} {:>14.1f} {:>14}\n",
                 ibscope::units::format_size(bytes), t_reduce * 1e6, last_reduce, t_copy * 1e6,
                 last_copy, 100.0 * last_reduce / last_copy,
                 info.memory_bw_gbps > 0
                     ? fmt::format("{:.1f}", 100.0 * last_reduce / info.memory_bw_gbps)
                     : std::string("-"));
      if (bytes > max_bytes / 2) break;  // a MAX that is not a power of two times 1 MiB
    }
    fmt::print("gpu_reduce_gbps {:.1f} copy_gbps {:.1f} peak_gbps {:.1f} size_bytes {}\n",
               last_reduce, last_copy, info.memory_bw_gbps, last_bytes);
  } catch (const ibscope::Error& e) {
    fmt::print(stderr, "gpu_reduce_bench: {}\n", e.what());
    return ibscope::exit_status(e.kind());
  }
  return 0;
}
