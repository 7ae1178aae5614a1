#pragma once
/// Bootstrap over a TCP store served by rank 0 (tcp_store_server.hpp). Rank 0 listens on the
/// address it is given (or on a socket inherited from the local launcher); every rank,
/// rank 0 included, connects to it and authenticates with the job token.

#include <memory>
#include <string>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/bootstrap/tcp_store_server.hpp"

namespace ibscope::bootstrap {

struct TcpBootstrapOptions {
  int rank = 0;
  int size = 1;
  double timeout_s = 60;
  net::HostPort root;            ///< where rank 0 serves the store
  std::string token;             ///< the job's token (may be empty: then a warning is logged)
  int inherited_listen_fd = -1;  ///< rank 0 only: a listening socket from the local launcher
  TcpStoreLimits store_limits;   ///< rank 0 only: what strangers may cost the store
};

/// Connects (and on rank 0 also serves), then exchanges hostnames. Throws TimeoutError naming
/// the ranks that never arrived, RemoteError if refused, SystemError if rank 0 cannot listen.
std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpBootstrapOptions& options);

}  // namespace ibscope::bootstrap
