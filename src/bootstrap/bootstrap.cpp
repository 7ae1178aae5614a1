#include "ibscope/bootstrap/bootstrap.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <set>

#include "ibscope/bootstrap/wire.hpp"
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
  details_.resize(static_cast<std::size_t>(size_));
  detail_known_.assign(static_cast<std::size_t>(size_), true);
}

void Bootstrap::publish_detail(const std::string& detail) {
  publish(kDetailKey, std::span(reinterpret_cast<const std::byte*>(detail.data()), detail.size()));
  details_published_ = true;
  details_.assign(static_cast<std::size_t>(size_), std::string());
  detail_known_.assign(static_cast<std::size_t>(size_), false);
  details_[static_cast<std::size_t>(rank_)] = detail;
  detail_known_[static_cast<std::size_t>(rank_)] = true;
}

void Bootstrap::barrier(std::string_view what) { (void)allgather({}, what); }

std::vector<Bytes> Bootstrap::gather(std::span<const std::byte> mine, std::string_view what) {
  auto all = allgather(mine, what);
  if (rank_ != 0) return {};
  return all;
}

Bytes Bootstrap::broadcast(std::span<const std::byte> mine, std::string_view what) {
  auto all = allgather(rank_ == 0 ? mine : std::span<const std::byte>(), what);
  return std::move(all.at(0));
}

void Bootstrap::learn_hosts(std::span<const int> ranks) {
  std::vector<int> unknown, no_detail;
  for (const int r : ranks) {
    if (r < 0 || r >= size_) continue;
    if (hosts_[static_cast<std::size_t>(r)].empty()) unknown.push_back(r);
    if (details_published_ && !detail_known_[static_cast<std::size_t>(r)]) no_detail.push_back(r);
  }
  auto distinct = [](std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  distinct(unknown);
  distinct(no_detail);
  auto text = [](const Bytes& b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  if (!unknown.empty()) {
    const auto values = lookup(wire::kHostKey, unknown, "hosts of peers");
    for (std::size_t i = 0; i < unknown.size(); ++i) {
      hosts_[static_cast<std::size_t>(unknown[i])] = text(values[i]);
    }
  }
  if (!no_detail.empty()) {
    const auto values = lookup(kDetailKey, no_detail, "details of peers");
    for (std::size_t i = 0; i < no_detail.size(); ++i) {
      details_[static_cast<std::size_t>(no_detail[i])] = text(values[i]);
      detail_known_[static_cast<std::size_t>(no_detail[i])] = true;
    }
  }
}

void Bootstrap::set_layout(int local_rank, int local_size, int host_count,
                           std::vector<std::string> hosts) {
  if (hosts.size() != static_cast<std::size_t>(size_) || local_size <= 0 || local_rank < 0 ||
      local_rank >= local_size || host_count <= 0) {
    throw RemoteError(
        fmt::format("bootstrap: inconsistent host layout (local rank {} of {}, {} "
                    "hosts, {} host names for {} ranks)",
                    local_rank, local_size, host_count, hosts.size(), size_));
  }
  local_rank_ = local_rank;
  local_size_ = local_size;
  host_count_ = host_count;
  hosts_ = std::move(hosts);
  log::set_identity(rank_, hosts_[static_cast<std::size_t>(rank_)]);
}

void Bootstrap::discover_hosts() {
  const std::string me = local_hostname();
  const auto* p = reinterpret_cast<const std::byte*>(me.data());
  const auto all = allgather(std::span<const std::byte>(p, me.size()), "hostname exchange");
  local_rank_ = 0;
  local_size_ = 0;
  std::set<std::string, std::less<>> distinct;
  for (int r = 0; r < size_; ++r) {
    const Bytes& b = all[static_cast<std::size_t>(r)];
    hosts_[static_cast<std::size_t>(r)] =
        std::string(reinterpret_cast<const char*>(b.data()), b.size());
    distinct.insert(hosts_[static_cast<std::size_t>(r)]);
    if (hosts_[static_cast<std::size_t>(r)] == me) {
      if (r < rank_) ++local_rank_;
      ++local_size_;
    }
  }
  host_count_ = static_cast<int>(distinct.size());
  log::set_identity(rank_, me);
}

namespace {

class SingleBootstrap final : public Bootstrap {
 public:
  explicit SingleBootstrap(double timeout_s) : Bootstrap(0, 1, timeout_s) { discover_hosts(); }
  std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view) override {
    return {Bytes(mine.begin(), mine.end())};
  }
  void publish(std::string_view key, std::span<const std::byte> value) override {
    store_[std::string(key)] = Bytes(value.begin(), value.end());
  }
  std::vector<Bytes> lookup(std::string_view key, std::span<const int> ranks,
                            std::string_view what) override {
    std::vector<Bytes> out;
    for (const int r : ranks) {
      if (key == wire::kHostKey && r == 0) {
        const std::string& h = host(0);
        out.emplace_back(reinterpret_cast<const std::byte*>(h.data()),
                         reinterpret_cast<const std::byte*>(h.data()) + h.size());
        continue;
      }
      const auto it = store_.find(key);
      if (r != 0 || it == store_.end()) {
        throw RemoteError(
            fmt::format("bootstrap '{}': rank {} has not published '{}'", what, r, key));
      }
      out.push_back(it->second);
    }
    return out;
  }
  std::string_view kind() const noexcept override { return "single"; }

 private:
  std::map<std::string, Bytes, std::less<>> store_;
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
