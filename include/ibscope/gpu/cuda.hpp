#pragma once
/// The CUDA runtime as ibscope uses it: devices, device and pinned host memory, streams, events,
/// asynchronous copies, reduction kernels and dma-buf export for verbs registration.
///
/// Every function exists in every build. A build without CUDA (IBSCOPE_CUDA off, or no toolkit
/// found at configure time) implements them in gpu/cuda_unavailable.cpp: built_with_cuda() is
/// false and every other call throws UsageError saying this ibscope was built without CUDA and
/// how to rebuild. A CUDA build on a machine without a GPU or driver throws
/// Error(ErrorKind::kSystem) naming the CUDA call and its error string (e.g. "cudaGetDeviceCount:
/// no CUDA-capable device is detected").

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ibscope/core/datatype.hpp"

namespace ibscope::gpu {

/// True when this binary was compiled with CUDA support.
bool built_with_cuda() noexcept;

/// CUDA runtime version as "13.0" (the runtime this binary carries), or "" without CUDA.
std::string runtime_version();

/// Devices this process can see. Throws (see above) when there is no driver or no device.
int device_count();

struct DeviceInfo {
  int ordinal = -1;
  std::string name;        ///< e.g. "NVIDIA H200"
  std::string pci_bus_id;  ///< lower case, "0000:17:00.0" (the form hwloc and sysfs use)
  std::size_t total_bytes = 0;
  /// Peak device memory bandwidth from the memory clock and bus width, GB/s (0: unknown).
  double memory_bw_gbps = 0;
  bool dmabuf_supported = false;  ///< CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
};
DeviceInfo device_info(int ordinal);

/// The ordinal of the device at `pci_bus_id` (any case), or nullopt when not visible.
std::optional<int> device_by_pci_bus_id(const std::string& pci_bus_id);

/// Free memory of the current device (cudaMemGetInfo), or nullopt without CUDA, a device or
/// an answer (never throws).
std::optional<std::uint64_t> current_device_free_bytes() noexcept;

/// Makes `ordinal` current for this thread (cudaSetDevice).
void set_device(int ordinal);

/// Whether `ptr` is device memory (cudaPointerGetAttributes); false for host memory and in a
/// build without CUDA (never throws).
bool is_device_pointer(const void* ptr) noexcept;

/// cudaMalloc'd memory on one device. Move-only; the destructor frees it (noexcept).
class DeviceMemory {
 public:
  DeviceMemory() noexcept = default;
  /// Throws Error(kSystem) naming the size, the device and cudaMalloc's error.
  DeviceMemory(std::size_t bytes, int device);
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  int device() const noexcept { return device_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;
};

/// Page-locked host memory (cudaHostAlloc, portable). Move-only; freed in the destructor.
class PinnedHostMemory {
 public:
  PinnedHostMemory() noexcept = default;
  explicit PinnedHostMemory(std::size_t bytes);
  PinnedHostMemory(PinnedHostMemory&& other) noexcept;
  PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;
  ~PinnedHostMemory();

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A non-blocking CUDA stream on the current device. Move-only.
class Stream {
 public:
  Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  void synchronize();
  void* native() const noexcept { return stream_; }  ///< cudaStream_t

 private:
  void* stream_ = nullptr;
};

/// A CUDA event (timing disabled), recorded on a stream and polled. Move-only.
class Event {
 public:
  Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  void record(Stream& stream);
  /// True once everything before the record has finished (cudaEventQuery); throws on error.
  bool ready();
  void synchronize();

 private:
  void* event_ = nullptr;
};

/// cudaMemcpyAsync(..., cudaMemcpyDefault, stream): any direction, unified addressing.
void copy_async(void* dst, const void* src, std::size_t bytes, Stream& stream);
/// Synchronous copy in any direction (cudaMemcpy with cudaMemcpyDefault).
void copy(void* dst, const void* src, std::size_t bytes);

/// dst[i] = a[i] op b[i] on device memory, for every DataType and ReduceOp (half and bfloat16
/// computed in float and rounded once, like the host kernels). Enqueued on `stream`; dst may be
/// a or b. Throws Error(kSystem) on a launch failure.
void reduce_async(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                  std::size_t count, Stream& stream);

/// A dma-buf file descriptor for device memory (closed in the destructor).
class DmabufHandle {
 public:
  DmabufHandle() noexcept = default;
  DmabufHandle(int fd, std::size_t offset) noexcept : fd_(fd), offset_(offset) {}
  DmabufHandle(DmabufHandle&& other) noexcept;
  DmabufHandle& operator=(DmabufHandle&& other) noexcept;
  DmabufHandle(const DmabufHandle&) = delete;
  DmabufHandle& operator=(const DmabufHandle&) = delete;
  ~DmabufHandle();

  int fd() const noexcept { return fd_; }
  /// Offset of the exported range's start within the dma-buf (the range is page-aligned).
  std::size_t offset() const noexcept { return offset_; }

 private:
  int fd_ = -1;
  std::size_t offset_ = 0;
};

/// Exports [ptr, ptr + bytes) of device memory as a dma-buf (cuMemGetHandleForAddressRange,
/// reached through cudaGetDriverEntryPoint so that no libcuda link is needed). nullopt with
/// `why_not` set when the driver or device does not support it; never throws for that.
std::optional<DmabufHandle> export_dmabuf(const void* ptr, std::size_t bytes, std::string& why_not);

}  // namespace ibscope::gpu
