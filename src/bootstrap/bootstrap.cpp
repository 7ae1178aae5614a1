#include "ibscope/bootstrap/bootstrap.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::bootstrap {

Bootstrap::Bootstrap(int rank, int size, double timeout_s)
    : rank_(rank), size_(size), timeout_s_(timeout_s) {
  if (size <= 0 || rank < 0 || rank >= size) {
    throw UsageError(fmt::format("bootstrap: invalid rank {} of job size {}", rank, size));
  }
  hosts_.assign(static_cast<std::size_t>(size), std::string());
}

std::string Bootstrap::describe(int rank) const {
  if (rank < 0 || rank >= size_) return fmt::format("rank {}", rank);
  const std::string& h = hosts_[static_cast<std::size_t>(rank)];
  const std::string detail = static_cast<std::size_t>(rank) < details_.size()
                                 ? details_[static_cast<std::size_t>(rank)]
                                 : std::string();
  if (h.empty()) return fmt::format("rank {}", rank);
  return detail.empty() ? fmt::format("rank {} ({})", rank, h)
                        : fmt::format("rank {} ({}, {})", rank, h, detail);
}

void Bootstrap::set_rank_details(std::vector<std::string> details) {
  details_ = std::move(details);
}

void Bootstrap::barrier(std::string_view what) { (void)allgather({}, what); }

void Bootstrap::discover_hosts() {
  const std::string me = local_hostname();
  const auto* p = reinterpret_cast<const std::byte*>(me.data());
  const auto all = allgather(std::span<const std::byte>(p, me.size()), "hostname exchange");
  local_rank_ = 0;
  local_size_ = 0;
  for (int r = 0; r < size_; ++r) {
    const Bytes& b = all[static_cast<std::size_t>(r)];
    hosts_[static_cast<std::size_t>(r)] =
        std::string(reinterpret_cast<const char*>(b.data()), b.size());
    if (hosts_[static_cast<std::size_t>(r)] == me) {
      if (r < rank_) ++local_rank_;
      ++local_size_;
    }
  }
  log::set_identity(rank_, me);
}

namespace {

class SingleBootstrap final : public Bootstrap {
 public:
  explicit SingleBootstrap(double timeout_s) : Bootstrap(0, 1, timeout_s) { discover_hosts(); }
  std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view) override {
    return {Bytes(mine.begin(), mine.end())};
  }
  std::string_view kind() const noexcept override { return "single"; }
};

}  // namespace

std::unique_ptr<Bootstrap> make_single_bootstrap(double timeout_s) {
  return std::make_unique<SingleBootstrap>(timeout_s);
}

std::string local_hostname() {
  if (const char* h = std::getenv("IBSCOPE_HOSTNAME"); h != nullptr && *h != '\0') return h;
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

}  // namespace ibscope::bootstrap
