#pragma once
// Ranks as emulated hosts on one machine: one ibscope process per "host" emu0, emu1, ...
// (IBSCOPE_HOSTNAME), wired through the TCP store on loopback, UCX over TCP. Links between
// them count as links between hosts (accept judges them).

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ibscope/bootstrap/socket.hpp"
#include "process.hpp"

namespace ibscope::test {

inline std::uint16_t free_port() {
  auto fd = ibscope::bootstrap::net::listen_tcp({"127.0.0.1", 0});
  return ibscope::bootstrap::net::bound_port(fd.get());
}

/// Starts one rank of `ibscope args...` on each emulated host named in `host_of_rank`
/// ("emu0", ...; several ranks may share a host); the running ranks by rank.
inline std::vector<Running> start_emulated_ranks(const std::vector<std::string>& host_of_rank,
                                                 const std::vector<std::string>& args,
                                                 double limit_s = 120) {
  const std::string root = fmt::format("127.0.0.1:{}", free_port());
  const int size = static_cast<int>(host_of_rank.size());
  std::vector<Running> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.push_back(start_process({args,
                                   {{"IBSCOPE_BOOTSTRAP", "tcp"},
                                    {"IBSCOPE_RANK", std::to_string(r)},
                                    {"IBSCOPE_SIZE", std::to_string(size)},
                                    {"IBSCOPE_ROOT", root},
                                    {"IBSCOPE_TOKEN", "emulated-hosts-test"},
                                    {"IBSCOPE_HOSTNAME", host_of_rank[static_cast<std::size_t>(r)]},
                                    {"UCX_TLS", "tcp"}},
                                   limit_s}));
  }
  return ranks;
}

/// start_emulated_ranks(), then waits for all of them; results by rank.
inline std::vector<ProcessResult> run_emulated_ranks(const std::vector<std::string>& host_of_rank,
                                                     const std::vector<std::string>& args,
                                                     double limit_s = 120) {
  std::vector<ProcessResult> out;
  for (auto& r : start_emulated_ranks(host_of_rank, args, limit_s)) out.push_back(wait_process(r));
  return out;
}

/// Starts `hosts` ranks of `ibscope args...`, one per emulated host, and waits for all of them;
/// results by rank.
inline std::vector<ProcessResult> run_emulated_hosts(int hosts,
                                                     const std::vector<std::string>& args,
                                                     double limit_s = 120) {
  std::vector<std::string> host_of_rank;
  for (int r = 0; r < hosts; ++r) host_of_rank.push_back(fmt::format("emu{}", r));
  return run_emulated_ranks(host_of_rank, args, limit_s);
}

}  // namespace ibscope::test
