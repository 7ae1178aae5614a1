// The CUDA runtime module (ibscope/gpu/cuda.hpp) where no GPU is needed: what a build without
// CUDA answers, what a CUDA build answers on a machine without a GPU or driver (this CI), and
// the handles' ownership. On a GPU machine the CUDA-build checks see the devices instead;
// tests/gpu/ exercises them for real.

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/gpu/cuda.hpp"

using Catch::Contains;
using ibscope::Error;
using ibscope::ErrorKind;
using ibscope::UsageError;
namespace gpu = ibscope::gpu;

namespace {

#if defined(IBSCOPE_HAVE_CUDA)
constexpr bool kHaveCuda = true;
#else
constexpr bool kHaveCuda = false;
#endif

bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

// The number of visible devices, or the message device_count() threw.
std::pair<int, std::string> count_or_error() {
  try {
    return {gpu::device_count(), ""};
  } catch (const Error& e) {
    return {0, e.what()};
  }
}

}  // namespace

TEST_CASE("gpu: built_with_cuda matches the build's IBSCOPE_HAVE_CUDA", "[gpu]") {
  CHECK(gpu::built_with_cuda() == kHaveCuda);
  if (kHaveCuda) {
    const std::string v = gpu::runtime_version();  // cudart answers without a driver
    CHECK_THAT(v, Contains("."));
    CHECK(v.front() >= '1');
    CHECK(v.front() <= '9');
  } else {
    CHECK(gpu::runtime_version().empty());
  }
}

TEST_CASE("gpu: host memory is never device memory, and asking never throws", "[gpu]") {
  std::vector<int> host(256, 1);
  int on_stack = 0;
  CHECK_FALSE(gpu::is_device_pointer(host.data()));
  CHECK_FALSE(gpu::is_device_pointer(&on_stack));
  CHECK_FALSE(gpu::is_device_pointer(nullptr));
}

TEST_CASE("gpu: empty handles are free to make, move and destroy", "[gpu]") {
  gpu::DeviceMemory d;
  CHECK(d.data() == nullptr);
  CHECK(d.size() == 0);
  CHECK(d.device() == -1);
  gpu::DeviceMemory d2(std::move(d));
  d = std::move(d2);
  CHECK(d.data() == nullptr);

  gpu::PinnedHostMemory p;
  CHECK(p.data() == nullptr);
  gpu::PinnedHostMemory p2(std::move(p));
  CHECK(p2.size() == 0);

  gpu::DmabufHandle h;
  CHECK(h.fd() == -1);
  CHECK(h.offset() == 0);
}

TEST_CASE("gpu: DmabufHandle owns its descriptor: moves hand it over, destruction closes it",
          "[gpu]") {
  int fds[2] = {-1, -1};
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[1]);
  {
    gpu::DmabufHandle a(fds[0], 123);
    gpu::DmabufHandle b(std::move(a));
    CHECK(a.fd() == -1);  // NOLINT(bugprone-use-after-move): the move empties the source
    CHECK(b.fd() == fds[0]);
    CHECK(b.offset() == 123);
    gpu::DmabufHandle c;
    c = std::move(b);
    CHECK(c.fd() == fds[0]);
    CHECK(fd_open(fds[0]));
  }
  CHECK_FALSE(fd_open(fds[0]));
}

TEST_CASE("gpu: without CUDA every GPU call is a UsageError saying how to rebuild", "[gpu]") {
  if (kHaveCuda) {
    SUCCEED("CUDA build: see the next test");
    return;
  }
  auto check_usage = [](auto&& call) {
    try {
      call();
      FAIL("no exception");
    } catch (const UsageError& e) {
      CHECK(e.kind() == ErrorKind::kUsage);
      CHECK_THAT(e.what(), Contains("built without CUDA") && Contains("CUDA toolkit"));
    }
  };
  check_usage([] { gpu::DeviceMemory m(1024, 0); });
  check_usage([] { (void)gpu::device_count(); });
  check_usage([] { (void)gpu::device_info(0); });
  check_usage([] { gpu::set_device(0); });
  check_usage([] { gpu::PinnedHostMemory m(4096); });
  check_usage([] { gpu::Stream s; });
  check_usage([] { gpu::Event e; });
  check_usage([] { gpu::copy(nullptr, nullptr, 16); });
  check_usage([] { (void)gpu::device_by_pci_bus_id("0000:17:00.0"); });
  std::string why;
  check_usage([&] { (void)gpu::export_dmabuf(&why, 16, why); });
}

TEST_CASE("gpu: a CUDA build names the CUDA call when there is no GPU or driver", "[gpu]") {
  if (!kHaveCuda) {
    SUCCEED("build without CUDA: see the previous test");
    return;
  }
  const auto [count, message] = count_or_error();
  if (count > 0) {  // a GPU machine: the devices answer instead
    const auto info = gpu::device_info(0);
    CHECK_FALSE(info.name.empty());
    CHECK(info.pci_bus_id.size() >= 12);
    CHECK(gpu::device_by_pci_bus_id(info.pci_bus_id) == 0);
    gpu::DeviceMemory m(1024, 0);
    CHECK(gpu::is_device_pointer(m.data()));
    return;
  }
  CHECK_THAT(message, Contains("cudaGetDeviceCount") && Contains("no NVIDIA GPU or driver"));
  try {
    gpu::DeviceMemory m(1024, 0);
    FAIL("no exception");
  } catch (const UsageError&) {
    FAIL("a CUDA build must not answer 'built without CUDA'");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kSystem);
    // The first call that needs the driver fails: cudaGetDevice/cudaSetDevice or cudaMalloc.
    CHECK_THAT(e.what(), Contains("cuda"));
  }
  try {
    gpu::Stream s;
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kSystem);
    CHECK_THAT(e.what(), Contains("cudaStreamCreateWithFlags"));
  }
  CHECK_NOTHROW(gpu::copy(nullptr, nullptr, 0));  // a copy of nothing touches no device
  std::string why;
  int host = 0;
  CHECK_FALSE(gpu::export_dmabuf(&host, sizeof host, why).has_value());
  CHECK_THAT(why, Contains("not CUDA device memory"));
}

TEST_CASE("gpu: CUDA_VISIBLE_DEVICES is named when it is set and no device is visible", "[gpu]") {
  if (!kHaveCuda || count_or_error().first > 0) {
    SUCCEED("needs a CUDA build without a visible GPU");
    return;
  }
  // The runtime reads the variable once, at its first call: set it for this message only.
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "7", 1);
  const std::string message = count_or_error().second;
  if (old != nullptr) {
    ::setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  CHECK_THAT(message, Contains("CUDA_VISIBLE_DEVICES='7'"));
}
