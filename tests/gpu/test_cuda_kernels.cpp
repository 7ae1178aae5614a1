// GPU-only tests of the CUDA runtime module (ibscope/gpu/cuda.hpp), executable
// ibscope_gpu_tests: the reduction kernels against the host kernels (ibscope::reduce) byte for
// byte, for every type x op, sizes 0 .. 1M+3, out of place, in place and unaligned; memory,
// streams, events, copies, device info and dma-buf export on a real device.
// Exits 77 (skipped) when no GPU is visible, unless IBSCOPE_GPU_REQUIRED=1 (then 1).
// Run by tests/gpu/run_gpu_checks.sh; registered with ctest as gpu/kernels (label gpu).

#define CATCH_CONFIG_RUNNER
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/reduce.hpp"
#include "ibscope/gpu/cuda.hpp"

using Catch::Contains;
using ibscope::DataType;
using ibscope::ReduceOp;
namespace gpu = ibscope::gpu;

namespace {

constexpr std::size_t kSizes[] = {0, 1, 7, 4097, (std::size_t{1} << 20) + 3};

// Random finite values of every magnitude and sign: random bit patterns without NaN or
// infinity (so subnormals, negative zero, the largest values that overflow when summed), some
// pairs equal and some +0/-0 pairs, so that min/max ties are exercised too.
template <typename Bits>
Bits random_finite(std::mt19937_64& rng, int exp_shift, Bits exp_mask) {
  for (;;) {
    const auto bits = static_cast<Bits>(rng());
    if (((bits >> exp_shift) & exp_mask) != exp_mask) return bits;
  }
}

std::vector<std::byte> random_values(DataType type, std::size_t count, std::mt19937_64& rng) {
  const std::size_t size = ibscope::size_of(type);
  std::vector<std::byte> out(count * size);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t v = 0;
    switch (type) {
      case DataType::kFloat32:
        v = random_finite<std::uint32_t>(rng, 23, 0xffu);
        break;
      case DataType::kFloat64:
        v = random_finite<std::uint64_t>(rng, 52, 0x7ffu);
        break;
      case DataType::kInt32:
      case DataType::kInt64:
        v = rng();
        break;
      case DataType::kFloat16:
        v = random_finite<std::uint16_t>(rng, 10, 0x1fu);
        break;
      case DataType::kBFloat16:
        v = random_finite<std::uint16_t>(rng, 7, 0xffu);
        break;
    }
    std::memcpy(out.data() + i * size, &v, size);  // little endian: the low bytes
  }
  return out;
}

// b with some elements equal to a's and some +0/-0 against a's -0/+0.
void add_ties(DataType type, const std::vector<std::byte>& a, std::vector<std::byte>& b,
              std::vector<std::byte>& a_mut) {
  const std::size_t size = ibscope::size_of(type);
  const std::size_t count = a.size() / size;
  const bool floating = type != DataType::kInt32 && type != DataType::kInt64;
  for (std::size_t i = 0; i < count; i += 5) {
    std::memcpy(b.data() + i * size, a.data() + i * size, size);
    if (floating && i % 3 == 0) {  // a = +0, b = -0 (sign bit is the top bit)
      std::memset(a_mut.data() + i * size, 0, size);
      std::memset(b.data() + i * size, 0, size);
      b[(i + 1) * size - 1] = std::byte{0x80};
    }
  }
}

std::string hex(const std::byte* p, std::size_t size) {
  std::string s = "0x";
  for (std::size_t k = size; k-- > 0;) s += fmt::format("{:02x}", static_cast<unsigned>(p[k]));
  return s;
}

// Empty when equal, else the first differing element with its inputs.
std::string first_difference(DataType type, const std::vector<std::byte>& want,
                             const std::vector<std::byte>& got, const std::vector<std::byte>& a,
                             const std::vector<std::byte>& b) {
  if (want == got) return "";
  const std::size_t size = ibscope::size_of(type);
  for (std::size_t i = 0; i * size < want.size(); ++i) {
    if (std::memcmp(want.data() + i * size, got.data() + i * size, size) != 0) {
      return fmt::format("element {}: a {} b {} -> host {} device {}", i, hex(&a[i * size], size),
                         hex(&b[i * size], size), hex(&want[i * size], size),
                         hex(&got[i * size], size));
    }
  }
  return "sizes differ";
}

enum class Layout { kOutOfPlace, kInPlaceA, kInPlaceB, kUnaligned };

const char* name_of(Layout l) {
  switch (l) {
    case Layout::kOutOfPlace:
      return "out of place";
    case Layout::kInPlaceA:
      return "in place (dst == a)";
    case Layout::kInPlaceB:
      return "in place (dst == b)";
    case Layout::kUnaligned:
      return "unaligned (every pointer one element past 16 B)";
  }
  return "?";
}

// Reduces on the device and on the host; returns the first difference or "".
std::string compare_once(DataType type, ReduceOp op, std::size_t count, Layout layout,
                         std::mt19937_64& rng, gpu::Stream& stream) {
  const std::size_t size = ibscope::size_of(type);
  auto a = random_values(type, count, rng);
  auto b = random_values(type, count, rng);
  auto a_tied = a;
  add_ties(type, a, b, a_tied);
  a = a_tied;
  std::vector<std::byte> want(count * size);
  ibscope::reduce(type, op, want.data(), a.data(), b.data(), count);

  const std::size_t skew = layout == Layout::kUnaligned ? size : 0;
  const std::size_t bytes = count * size + skew + 16;
  gpu::DeviceMemory da(bytes, 0), db(bytes, 0), dd(bytes, 0);
  std::byte* pa = da.data() + skew;
  std::byte* pb = db.data() + skew;
  std::byte* pd = dd.data() + skew;
  if (layout == Layout::kInPlaceA) pd = pa;
  if (layout == Layout::kInPlaceB) pd = pb;
  gpu::copy(pa, a.data(), count * size);
  gpu::copy(pb, b.data(), count * size);
  gpu::reduce_async(type, op, pd, pa, pb, count, stream);
  stream.synchronize();
  std::vector<std::byte> got(count * size);
  gpu::copy(got.data(), pd, count * size);
  return first_difference(type, want, got, a, b);
}

}  // namespace

TEST_CASE("gpu kernels: reduce_async equals the host reduce byte for byte", "[gpu][reduce]") {
  gpu::set_device(0);
  gpu::Stream stream;
  std::mt19937_64 rng(20240611);
  for (DataType type : ibscope::kAllDataTypes) {
    for (ReduceOp op : ibscope::kAllReduceOps) {
      for (std::size_t count : kSizes) {
        for (Layout layout :
             {Layout::kOutOfPlace, Layout::kInPlaceA, Layout::kInPlaceB, Layout::kUnaligned}) {
          if (count > 4097 && layout == Layout::kInPlaceB) continue;  // same path as dst == a
          INFO(fmt::format("{} {} count {} {}", ibscope::name_of(type), ibscope::name_of(op), count,
                           name_of(layout)));
          CHECK(compare_once(type, op, count, layout, rng, stream).empty());
        }
      }
    }
  }
}

TEST_CASE("gpu kernels: count 0 is a no-op even with null pointers", "[gpu][reduce]") {
  gpu::Stream stream;
  for (DataType type : ibscope::kAllDataTypes) {
    CHECK_NOTHROW(gpu::reduce_async(type, ReduceOp::kSum, nullptr, nullptr, nullptr, 0, stream));
  }
  stream.synchronize();
}

TEST_CASE("gpu runtime: device info, lookup by PCI bus id, pointer kinds", "[gpu]") {
  const int n = gpu::device_count();
  REQUIRE(n > 0);
  for (int d = 0; d < n; ++d) {
    const auto info = gpu::device_info(d);
    INFO(fmt::format("device {}: {} {} {} bytes {:.0f} GB/s dmabuf {}", d, info.name,
                     info.pci_bus_id, info.total_bytes, info.memory_bw_gbps,
                     info.dmabuf_supported));
    CHECK(info.ordinal == d);
    CHECK_FALSE(info.name.empty());
    CHECK(info.total_bytes > (std::size_t{1} << 30));
    CHECK(info.memory_bw_gbps > 100);
    REQUIRE(info.pci_bus_id.size() == 12);  // dddd:bb:dd.f
    for (char c : info.pci_bus_id) CHECK(std::tolower(static_cast<unsigned char>(c)) == c);
    std::string upper = info.pci_bus_id;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(gpu::device_by_pci_bus_id(upper) == d);
    CHECK(gpu::device_by_pci_bus_id(info.pci_bus_id.substr(5)) == d);
  }
  CHECK_FALSE(gpu::device_by_pci_bus_id("ffff:ff:1f.7").has_value());

  gpu::DeviceMemory device(4096, 0);
  gpu::PinnedHostMemory pinned(4096);
  std::vector<int> host(16);
  CHECK(gpu::is_device_pointer(device.data()));
  CHECK(gpu::is_device_pointer(device.data() + 100));
  CHECK_FALSE(gpu::is_device_pointer(pinned.data()));
  CHECK_FALSE(gpu::is_device_pointer(host.data()));
  CHECK(gpu::runtime_version().rfind("1", 0) == 0);
}

TEST_CASE("gpu runtime: copies in every direction, streams and events", "[gpu]") {
  constexpr std::size_t kBytes = 3 << 20;
  gpu::DeviceMemory d1(kBytes, 0), d2(kBytes, 0);
  gpu::PinnedHostMemory src(kBytes), dst(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) src.data()[i] = static_cast<std::byte>(i * 7 + 1);
  std::memset(dst.data(), 0, kBytes);
  gpu::Stream stream;
  gpu::Event done;
  gpu::copy_async(d1.data(), src.data(), kBytes, stream);
  gpu::copy_async(d2.data(), d1.data(), kBytes, stream);
  gpu::copy_async(dst.data(), d2.data(), kBytes, stream);
  done.record(stream);
  done.synchronize();
  CHECK(done.ready());
  CHECK(std::memcmp(src.data(), dst.data(), kBytes) == 0);

  std::vector<std::byte> pageable(kBytes);
  gpu::copy(pageable.data(), d1.data(), kBytes);
  CHECK(std::memcmp(src.data(), pageable.data(), kBytes) == 0);

  gpu::Stream moved(std::move(stream));
  CHECK(moved.native() != nullptr);
  CHECK_THROWS_AS(stream.synchronize(), ibscope::UsageError);  // NOLINT: moved-from on purpose
  moved.synchronize();
}

TEST_CASE("gpu runtime: a failed allocation names cudaMalloc, the size and the device", "[gpu]") {
  const std::size_t too_much = std::size_t{1} << 52;  // 4 PiB
  try {
    gpu::DeviceMemory m(too_much, 0);
    FAIL("a 4 PiB cudaMalloc succeeded");
  } catch (const ibscope::Error& e) {
    CHECK(e.kind() == ibscope::ErrorKind::kSystem);
    CHECK_THAT(e.what(), Contains("cudaMalloc") && Contains("4503599627370496 bytes") &&
                             Contains("device 0"));
  }
  // The failure is not sticky: the device still works.
  gpu::DeviceMemory ok(1024, 0);
  CHECK(ok.data() != nullptr);
}

TEST_CASE("gpu runtime: dma-buf export gives a descriptor and the page offset, or says why",
          "[gpu][dmabuf]") {
  gpu::DeviceMemory m(8 << 20, 0);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::string why;
  for (std::size_t offset : {std::size_t{0}, std::size_t{100}, page + 8}) {
    auto handle = gpu::export_dmabuf(m.data() + offset, 1 << 20, why);
    if (!handle) {
      WARN("dma-buf export unavailable here: " << why);
      CHECK_FALSE(why.empty());
      return;
    }
    CHECK(handle->fd() >= 0);
    CHECK(handle->offset() == (reinterpret_cast<std::uintptr_t>(m.data()) + offset) % page);
    CHECK(why.empty());
  }
  int host = 0;
  CHECK_FALSE(gpu::export_dmabuf(&host, sizeof host, why).has_value());
  CHECK_THAT(why, Contains("not CUDA device memory"));
}

int main(int argc, char** argv) {
  try {
    const int n = gpu::device_count();
    const auto info = gpu::device_info(0);
    fmt::print("ibscope_gpu_tests: {} device(s); device 0 {} ({}), CUDA runtime {}\n", n, info.name,
               info.pci_bus_id, gpu::runtime_version());
  } catch (const ibscope::Error& e) {
    const char* required = std::getenv("IBSCOPE_GPU_REQUIRED");
    const bool must = required != nullptr && std::string(required) == "1";
    fmt::print(stderr, "ibscope_gpu_tests: {}: {}\n",
               must ? "FAIL (IBSCOPE_GPU_REQUIRED=1)" : "skipped", e.what());
    return must ? 1 : 77;
  }
  return Catch::Session().run(argc, argv);
}
