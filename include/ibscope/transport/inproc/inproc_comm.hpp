#pragma once
/// The in-process transport's bootstrap and communicator for one rank (a thread), over a
/// Fabric, and run_ranks(), which starts a job's ranks as threads (transport/inproc/fabric.hpp).

#include <exception>
#include <functional>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/transport/comm.hpp"
#include "ibscope/transport/inproc/fabric.hpp"

namespace ibscope::transport::inproc {

class InprocBootstrap final : public bootstrap::Bootstrap {
 public:
  InprocBootstrap(Fabric& fabric, int rank);

  std::vector<bootstrap::Bytes> allgather(std::span<const std::byte> mine,
                                          std::string_view what) override;
  void publish(std::string_view key, std::span<const std::byte> value) override;
  std::vector<bootstrap::Bytes> lookup(std::string_view key, std::span<const int> ranks,
                                       std::string_view what) override;
  void check_health() override;
  void abort_job(std::string_view reason) noexcept override;
  std::string_view kind() const noexcept override { return "inproc"; }

 private:
  Fabric& fabric_;
};

class InprocComm final : public Comm {
 public:
  InprocComm(InprocBootstrap& bootstrap, Fabric& fabric) noexcept
      : Comm(bootstrap), fabric_(fabric) {}

  std::string_view kind() const noexcept override { return "inproc"; }
  Request isend(int peer, Tag tag, const void* buffer, std::size_t bytes) override;
  Request irecv(int peer, Tag tag, void* buffer, std::size_t bytes) override;
  /// Nothing moves without a thread copying; gives the CPU to the ranks that have work.
  void progress() override;
  void poll_health(std::string_view what, const Deadline& deadline, int waiting_for) override;
  std::string transports(int peer) const override;
  void close() override;

 private:
  bool test(Request& request) override;
  void release(Request& request) noexcept override;
  void check_peer(int peer, std::string_view what) const;

  Fabric& fabric_;
  int sends_ = 0;
};

/// Runs `body` on every rank of a job of `shape`, one thread each, and returns what each rank
/// threw (null: it returned). A rank that throws is marked failed first, so that the others'
/// waits end naming it, as a crashed process ends them.
std::vector<std::exception_ptr> run_ranks(const JobShape& shape,
                                          const std::function<void(Comm&)>& body);

}  // namespace ibscope::transport::inproc
