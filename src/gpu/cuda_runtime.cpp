// The CUDA runtime module (include/ibscope/gpu/cuda.hpp) over the static cudart. The driver API
// (dma-buf support and export) is reached through cudaGetDriverEntryPointByVersion, so libcuda
// is never linked: the binary starts on machines without a driver and says so when asked.

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "reduce_kernels.hpp"

namespace ibscope::gpu {
namespace {

// "<call>: <error string> (<context>; <error name>)", e.g. "cudaMalloc: out of memory (1 GiB =
// 1073741824 bytes on device 0; cudaErrorMemoryAllocation)".
std::string failure_text(std::string_view call, cudaError_t err, std::string_view context) {
  return fmt::format("{}: {} ({}; {})", call, cudaGetErrorString(err), context,
                     cudaGetErrorName(err));
}

// A failed call also sets the runtime's "last error"; clear it so that a later, unrelated
// cudaGetLastError (the kernel launch check) does not report it again.
[[noreturn]] void fail(std::string_view call, cudaError_t err, std::string_view context) {
  (void)cudaGetLastError();
  throw Error(ErrorKind::kSystem, failure_text(call, err, context));
}

// Formats the context only on failure.
template <typename Context>
void check(cudaError_t err, std::string_view call, Context&& context) {
  if (err != cudaSuccess) fail(call, err, context());
}

std::string bytes_text(std::size_t bytes) {
  return fmt::format("{} = {} bytes", units::format_size(bytes), bytes);
}

// Keeps the calling thread's current device across a call that must run on another one.
class DeviceScope {
 public:
  /// `purpose` completes the error messages: "device 0, for <purpose>".
  DeviceScope(int device, std::string_view purpose) {
    check(cudaGetDevice(&previous_), "cudaGetDevice", [&] {
      return fmt::format("current device, before switching to device {} for {}", device, purpose);
    });
    if (previous_ != device) {
      check(cudaSetDevice(device), "cudaSetDevice",
            [&] { return fmt::format("device {}, for {}", device, purpose); });
    }
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
    (void)cudaGetLastError();
  }

 private:
  int previous_ = 0;
};

cudaStream_t stream_of(Stream& stream) {
  auto* s = static_cast<cudaStream_t>(stream.native());
  if (s == nullptr) {
    throw UsageError("ibscope::gpu: a moved-from Stream was used (it has no CUDA stream)");
  }
  return s;
}

// A driver API function by name and ABI version (the version that introduced the signature in
// cudaTypedefs.h), or nullptr when the driver lacks it.
template <typename Fn>
Fn driver_entry(const char* symbol, unsigned int version) noexcept {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}

std::string cu_error_text(CUresult r) {
  const char* text = nullptr;
  if (auto get = driver_entry<PFN_cuGetErrorString_v6000>("cuGetErrorString", 6000);
      get != nullptr && get(r, &text) == CUDA_SUCCESS && text != nullptr) {
    return fmt::format("{} (CUresult {})", text, static_cast<int>(r));
  }
  return fmt::format("CUresult {}", static_cast<int>(r));
}

// CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED through the driver; false when it cannot be asked.
bool driver_dmabuf_supported(int ordinal) noexcept {
  auto get_device = driver_entry<PFN_cuDeviceGet_v2000>("cuDeviceGet", 2000);
  auto get_attribute = driver_entry<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute", 2000);
  if (get_device == nullptr || get_attribute == nullptr) return false;
  CUdevice device{};
  int value = 0;
  return get_device(&device, ordinal) == CUDA_SUCCESS &&
         get_attribute(&value, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) == CUDA_SUCCESS &&
         value != 0;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string pci_bus_id_of(int ordinal) {
  char id[32] = {};
  check(cudaDeviceGetPCIBusId(id, static_cast<int>(sizeof id), ordinal), "cudaDeviceGetPCIBusId",
        [&] { return fmt::format("device {}", ordinal); });
  return lower(id);
}

}  // namespace

bool built_with_cuda() noexcept { return true; }

std::string runtime_version() {
  int version = 0;
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) {
    (void)cudaGetLastError();
    version = CUDART_VERSION;
  }
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

int device_count() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return count;
  (void)cudaGetLastError();
  std::string why = "no NVIDIA GPU or driver is visible to this process";
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) {
    why += fmt::format(", and CUDA_VISIBLE_DEVICES='{}' is set: it limits which GPUs it sees",
                       visible);
  }
  if (err == cudaSuccess) {
    throw Error(ErrorKind::kSystem, fmt::format("cudaGetDeviceCount: 0 devices ({})", why));
  }
  throw Error(ErrorKind::kSystem, failure_text("cudaGetDeviceCount", err, why));
}

DeviceInfo device_info(int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties",
        [&] { return fmt::format("device {}", ordinal); });
  info.name = prop.name;
  info.total_bytes = prop.totalGlobalMem;
  info.pci_bus_id = pci_bus_id_of(ordinal);
  // Peak bandwidth: double data rate x memory clock x bus width. Both attributes may be absent
  // (0 or an error) on some platforms: then 0, "unknown".
  int clock_khz = 0;
  int bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal) == cudaSuccess &&
      clock_khz > 0 && bus_bits > 0) {
    info.memory_bw_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / units::kBytesPerGB;
  }
  (void)cudaGetLastError();
  info.dmabuf_supported = driver_dmabuf_supported(ordinal);
  return info;
}

std::optional<int> device_by_pci_bus_id(const std::string& pci_bus_id) {
  // Compared as text, so "17:00.0" (no domain) matches too; device_count() throws without a
  // driver, which is not "not visible".
  std::string wanted = lower(pci_bus_id);
  if (std::count(wanted.begin(), wanted.end(), ':') == 1) wanted = "0000:" + wanted;
  const int count = device_count();
  for (int d = 0; d < count; ++d) {
    if (pci_bus_id_of(d) == wanted) return d;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> current_device_free_bytes() noexcept {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return free_bytes;
}

void set_device(int ordinal) {
  check(cudaSetDevice(ordinal), "cudaSetDevice", [&] { return fmt::format("device {}", ordinal); });
}

bool is_device_pointer(const void* ptr) noexcept {
  if (ptr == nullptr) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice;
}

// ---- DeviceMemory ----------------------------------------------------------------------------

DeviceMemory::DeviceMemory(std::size_t bytes, int device) : size_(bytes), device_(device) {
  DeviceScope scope(device, fmt::format("cudaMalloc of {}", bytes_text(bytes)));
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc",
        [&] { return fmt::format("{} on device {}", bytes_text(bytes), device); });
  data_ = static_cast<std::byte*>(p);
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      device_(std::exchange(other.device_, -1)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    DeviceMemory old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

DeviceMemory::~DeviceMemory() {
  // cudaFree synchronises the device and frees on whichever device owns the pointer (unified
  // addressing); an error here (driver gone at exit) cannot be reported from a destructor.
  if (data_ != nullptr) {
    (void)cudaFree(data_);
    (void)cudaGetLastError();
  }
}

// ---- PinnedHostMemory ------------------------------------------------------------------------

PinnedHostMemory::PinnedHostMemory(std::size_t bytes) : size_(bytes) {
  void* p = nullptr;
  check(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), "cudaHostAlloc",
        [&] { return fmt::format("{} of pinned host memory", bytes_text(bytes)); });
  data_ = static_cast<std::byte*>(p);
}

PinnedHostMemory::PinnedHostMemory(PinnedHostMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

PinnedHostMemory& PinnedHostMemory::operator=(PinnedHostMemory&& other) noexcept {
  if (this != &other) {
    PinnedHostMemory old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

PinnedHostMemory::~PinnedHostMemory() {
  if (data_ != nullptr) {
    (void)cudaFreeHost(data_);
    (void)cudaGetLastError();
  }
}

// ---- Stream, Event ---------------------------------------------------------------------------

Stream::Stream() {
  cudaStream_t s = nullptr;
  // Non-blocking: never serialised with the legacy default stream that other code may use.
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", [] {
    int device = -1;
    (void)cudaGetDevice(&device);
    return fmt::format("non-blocking stream on device {}", device);
  });
  stream_ = s;
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Stream old(std::move(*this));
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  if (stream_ != nullptr) {
    (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
    (void)cudaGetLastError();
  }
}

void Stream::synchronize() {
  check(cudaStreamSynchronize(stream_of(*this)), "cudaStreamSynchronize",
        [] { return std::string("waiting for the stream's copies and kernels"); });
}

Event::Event() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags",
        [] { return std::string("event without timing"); });
  event_ = e;
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event old(std::move(*this));
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Event::~Event() {
  if (event_ != nullptr) {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event_));
    (void)cudaGetLastError();
  }
}

namespace {
cudaEvent_t native_event(void* e) {
  if (e == nullptr) {
    throw UsageError("ibscope::gpu: a moved-from Event was used (it has no CUDA event)");
  }
  return static_cast<cudaEvent_t>(e);
}
}  // namespace

void Event::record(Stream& stream) {
  check(cudaEventRecord(native_event(event_), stream_of(stream)), "cudaEventRecord",
        [] { return std::string("recording an event on a stream"); });
}

bool Event::ready() {
  const cudaError_t err = cudaEventQuery(native_event(event_));
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) return false;
  fail("cudaEventQuery", err, "an earlier copy or kernel on the event's stream failed");
}

void Event::synchronize() {
  check(cudaEventSynchronize(native_event(event_)), "cudaEventSynchronize",
        [] { return std::string("waiting for an event"); });
}

// ---- Copies and reductions -------------------------------------------------------------------

void copy_async(void* dst, const void* src, std::size_t bytes, Stream& stream) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_of(stream)), "cudaMemcpyAsync",
        [&] { return fmt::format("{} from {} to {}", bytes_text(bytes), src, dst); });
}

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy",
        [&] { return fmt::format("{} from {} to {}", bytes_text(bytes), src, dst); });
}

void reduce_async(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                  std::size_t count, Stream& stream) {
  if (count == 0) return;
  const cudaStream_t s = stream_of(stream);
  check(detail::launch_reduce(type, op, dst, a, b, count, s), "reduce kernel launch", [&] {
    return fmt::format("{} {} of {} elements ({}), dst {} a {} b {}", name_of(type), name_of(op),
                       count, bytes_text(count * size_of(type)), dst, a, b);
  });
}

// ---- dma-buf export --------------------------------------------------------------------------

std::optional<DmabufHandle> export_dmabuf(const void* ptr, std::size_t bytes,
                                          std::string& why_not) {
  why_not.clear();
  if (ptr == nullptr || bytes == 0) {
    why_not = "dma-buf export: empty range";
    return std::nullopt;
  }
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess ||
      attributes.type != cudaMemoryTypeDevice) {
    (void)cudaGetLastError();
    why_not = fmt::format("dma-buf export: {} is not CUDA device memory", ptr);
    return std::nullopt;
  }
  const int device = attributes.device;
  if (!driver_dmabuf_supported(device)) {
    why_not = fmt::format(
        "dma-buf export: device {} does not support dma-buf "
        "(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0; it needs the open NVIDIA kernel modules "
        "and Linux >= 5.12)",
        device);
    return std::nullopt;
  }
  auto get_handle = driver_entry<PFN_cuMemGetHandleForAddressRange_v11070>(
      "cuMemGetHandleForAddressRange", 11070);
  if (get_handle == nullptr) {
    why_not =
        "dma-buf export: the NVIDIA driver lacks cuMemGetHandleForAddressRange "
        "(needs a driver for CUDA >= 11.7)";
    return std::nullopt;
  }
  // The driver wants a range aligned to the host page on both ends; the buffer's start is then
  // `offset` bytes into the dma-buf (what ibv_reg_dmabuf_mr takes as its offset).
  const long page_size = sysconf(_SC_PAGESIZE);
  const std::uintptr_t page = page_size > 0 ? static_cast<std::uintptr_t>(page_size) : 4096;
  const auto start = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t aligned_start = start & ~(page - 1);
  const std::uintptr_t aligned_end = (start + bytes + page - 1) & ~(page - 1);
  int fd = -1;
  const CUresult r =
      get_handle(&fd, static_cast<CUdeviceptr>(aligned_start), aligned_end - aligned_start,
                 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (r != CUDA_SUCCESS || fd < 0) {
    why_not = fmt::format(
        "cuMemGetHandleForAddressRange: {}; {} at {:#x} (page-aligned from {} bytes at {}) on "
        "device {}",
        cu_error_text(r), bytes_text(aligned_end - aligned_start), aligned_start, bytes, ptr,
        device);
    return std::nullopt;
  }
  return DmabufHandle(fd, static_cast<std::size_t>(start - aligned_start));
}

}  // namespace ibscope::gpu
