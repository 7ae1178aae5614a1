// Registration of GPU memory: the fallback order dma-buf -> peermem -> error, through an
// injected Api (a fake device, PD and MRs: nothing reaches libibverbs) and injected dma-buf
// export and peermem facts; and the pure decision and its messages.
#include <fcntl.h>
#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "ibscope/gpu/cuda.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/memory_region.hpp"
#include "ibscope/transport/verbs/protection_domain.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

using namespace ibscope;
using namespace ibscope::verbs;

namespace {

// One fake device "fake0" whose registrations fail as told, and that records every call.
class FakeRegistrar : public Api {
 public:
  ibv_device** get_device_list(int* n) override {
    *n = 1;
    return list_;
  }
  void free_device_list(ibv_device**) override {}
  const char* get_device_name(ibv_device*) override { return "fake0"; }
  ibv_context* open_device(ibv_device*) override { return reinterpret_cast<ibv_context*>(0x100); }
  int close_device(ibv_context*) override { return 0; }
  int query_device(ibv_context*, ibv_device_attr* attr) override {
    *attr = ibv_device_attr{};
    attr->max_mr_size = 1ULL << 40;
    return 0;
  }
  ibv_pd* alloc_pd(ibv_context*) override { return reinterpret_cast<ibv_pd*>(0x200); }
  int dealloc_pd(ibv_pd*) override { return 0; }

  ibv_mr* reg_mr(ibv_pd*, void* addr, std::size_t length, int access) override {
    calls.push_back("reg_mr");
    if (reg_mr_errno != 0) {
      errno = reg_mr_errno;
      return nullptr;
    }
    return fill(reinterpret_cast<std::uint64_t>(addr), length, access);
  }
  ibv_mr* reg_dmabuf_mr(ibv_pd*, std::uint64_t offset, std::size_t length, std::uint64_t iova,
                        int fd, int access) override {
    calls.push_back("reg_dmabuf_mr");
    seen_offset = offset;
    seen_fd = fd;
    if (dmabuf_errno != 0) {
      errno = dmabuf_errno;
      return nullptr;
    }
    return fill(iova, length, access);
  }
  int dereg_mr(ibv_mr* mr) override {
    if (mr == &mr_) ++deregistered;
    return 0;
  }

  int reg_mr_errno = 0;
  int dmabuf_errno = 0;
  std::vector<std::string> calls;
  std::uint64_t seen_offset = 0;
  int seen_fd = -1;
  int deregistered = 0;
  ibv_mr mr_{};

 private:
  ibv_mr* fill(std::uint64_t addr, std::size_t length, int access) {
    mr_ = ibv_mr{};
    mr_.addr = reinterpret_cast<void*>(addr);
    mr_.length = length;
    mr_.lkey = 0x11;
    mr_.rkey = static_cast<std::uint32_t>(access);
    return &mr_;
  }
  ibv_device* list_[2] = {reinterpret_cast<ibv_device*>(0x10), nullptr};
};

// An exporter that hands out a real descriptor (/dev/null) so the handle's close is real.
DeviceRegistrationHooks exporting(bool peermem, std::size_t offset = 0) {
  DeviceRegistrationHooks h;
  h.export_dmabuf = [offset](const void*, std::size_t, std::string&) {
    return std::optional<gpu::DmabufHandle>(std::in_place, ::open("/dev/null", O_RDONLY), offset);
  };
  h.peermem_loaded = [peermem] { return peermem; };
  return h;
}

DeviceRegistrationHooks not_exporting(bool peermem) {
  DeviceRegistrationHooks h;
  h.export_dmabuf = [](const void*, std::size_t, std::string& why_not) {
    why_not = "cuMemGetHandleForAddressRange: operation not supported";
    return std::optional<gpu::DmabufHandle>();
  };
  h.peermem_loaded = [peermem] { return peermem; };
  return h;
}

void* const kDevicePtr = reinterpret_cast<void*>(0x7f0000200000);

}  // namespace

TEST_CASE("GPU registration: dma-buf first, with the device pointer as iova", "[verbs][gpu]") {
  FakeRegistrar fake;
  ScopedApi scope(fake);
  auto pd = ProtectionDomain::create(DeviceContext::open(""));
  {
    auto mr = MemoryRegion::for_device(pd, kDevicePtr, 1 << 20, kLocalWrite | kRemoteWrite,
                                       exporting(false, 4096));
    CHECK(mr.method() == RegistrationMethod::kDmabuf);
    CHECK(fake.calls == std::vector<std::string>{"reg_dmabuf_mr"});
    CHECK(fake.seen_offset == 4096);
    CHECK(fake.seen_fd >= 0);
    CHECK(fake.mr_.addr == kDevicePtr);
    CHECK(fake.mr_.rkey == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    CHECK(mr.addr() == kDevicePtr);
    CHECK(mr.bytes() == (1u << 20));
    CHECK(to_string(mr.method()) == "dmabuf");
  }
  CHECK(fake.deregistered == 1);
  // The exported descriptor is closed once the region exists.
  CHECK(::fcntl(fake.seen_fd, F_GETFD) == -1);
}

TEST_CASE("GPU registration: ibv_reg_mr (peermem) when the export or the dma-buf MR fails",
          "[verbs][gpu]") {
  FakeRegistrar fake;
  ScopedApi scope(fake);
  auto pd = ProtectionDomain::create(DeviceContext::open(""));
  SECTION("no export") {
    auto mr = MemoryRegion::for_device(pd, kDevicePtr, 4096, kLocalWrite, not_exporting(true));
    CHECK(mr.method() == RegistrationMethod::kPeermem);
    CHECK(fake.calls == std::vector<std::string>{"reg_mr"});
  }
  SECTION("ibv_reg_dmabuf_mr refuses") {
    fake.dmabuf_errno = EOPNOTSUPP;
    auto mr = MemoryRegion::for_device(pd, kDevicePtr, 4096, kLocalWrite, exporting(true));
    CHECK(mr.method() == RegistrationMethod::kPeermem);
    CHECK(fake.calls == std::vector<std::string>{"reg_dmabuf_mr", "reg_mr"});
  }
  SECTION("the exporter throws (a build without CUDA)") {
    DeviceRegistrationHooks h = not_exporting(false);
    h.export_dmabuf = [](const void*, std::size_t,
                         std::string&) -> std::optional<gpu::DmabufHandle> {
      throw UsageError("built without CUDA");
    };
    auto mr = MemoryRegion::for_device(pd, kDevicePtr, 4096, kLocalWrite, h);
    CHECK(mr.method() == RegistrationMethod::kPeermem);
  }
}

TEST_CASE("GPU registration: neither works -> one line naming both causes and the remedy",
          "[verbs][gpu]") {
  FakeRegistrar fake;
  ScopedApi scope(fake);
  auto pd = ProtectionDomain::create(DeviceContext::open(""));
  fake.dmabuf_errno = EOPNOTSUPP;
  fake.reg_mr_errno = EFAULT;
  try {
    (void)MemoryRegion::for_device(pd, kDevicePtr, 4096, kLocalWrite, exporting(false));
    FAIL("no error");
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::StartsWith("cannot register GPU memory with fake0: dma-buf "
                                       "ibv_reg_dmabuf_mr: "));
    CHECK_THAT(what, Catch::Contains(fmt::format("(errno {})", EOPNOTSUPP)) &&
                         Catch::Contains("ibv_reg_mr on device memory Bad address (errno 14)") &&
                         Catch::Contains("nvidia-peermem not loaded: modprobe nvidia-peermem") &&
                         Catch::Contains("kernel >= 5.12"));
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK(fake.calls == std::vector<std::string>{"reg_dmabuf_mr", "reg_mr"});
  CHECK(fake.deregistered == 0);
  // Host memory registration is unchanged and says so.
  fake.reg_mr_errno = 0;
  std::vector<std::byte> host(4096);
  MemoryRegion plain(pd, host.data(), host.size(), kLocalWrite);
  CHECK(plain.method() == RegistrationMethod::kHost);
}

TEST_CASE("GPU registration decision (pure)", "[verbs][gpu]") {
  DeviceRegistrationObserved seen;
  seen.device = "mlx5_0";
  seen.dmabuf_registered = true;
  seen.reg_mr_registered = true;
  CHECK(decide_device_registration(seen).method == RegistrationMethod::kDmabuf);
  seen.dmabuf_registered = false;
  seen.dmabuf_failure = "no export";
  CHECK(decide_device_registration(seen).method == RegistrationMethod::kPeermem);
  CHECK(decide_device_registration(seen).error.empty());
  seen.reg_mr_registered = false;
  seen.reg_mr_errno = EINVAL;
  auto d = decide_device_registration(seen);
  CHECK_FALSE(d.method.has_value());
  CHECK_THAT(d.error, Catch::StartsWith("cannot register GPU memory with mlx5_0: dma-buf no "
                                        "export; ibv_reg_mr on device memory Invalid argument "
                                        "(errno 22) (nvidia-peermem not loaded"));
  seen.peermem_loaded = true;
  CHECK_THAT(decide_device_registration(seen).error,
             Catch::Contains("nvidia-peermem is loaded but refused the range"));
  CHECK(to_string(RegistrationMethod::kHost) == "host");
  CHECK(to_string(RegistrationMethod::kPeermem) == "peermem");
}

TEST_CASE("peermem module detection reads <sysfs>/module", "[verbs][gpu]") {
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("ibscope-peermem-{}", ::getpid());
  std::filesystem::create_directories(dir / "module" / "ib_core");
  CHECK_FALSE(peermem_module_loaded(dir));
  std::filesystem::create_directories(dir / "module" / "nv_peer_mem");
  CHECK(peermem_module_loaded(dir));
  std::filesystem::remove_all(dir / "module" / "nv_peer_mem");
  std::filesystem::create_directories(dir / "module" / "nvidia_peermem");
  CHECK(peermem_module_loaded(dir));
  std::filesystem::remove_all(dir);
  CHECK_FALSE(peermem_module_loaded("/nonexistent-sysfs"));
}
