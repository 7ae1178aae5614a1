#pragma once
/// `ibscope probe <test>`: the libibverbs probes with perftest's flags (-s/-a, -n, -q, -t, -I,
/// -m, -x, -d dev[:port], -B ...), plus -b/-e/-f sweeps and --pairs for all rank pairs.

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "ibscope/job/job.hpp"
#include "ibscope/probes/loopback.hpp"
#include "ibscope/probes/probe_options.hpp"

namespace ibscope::cli {

struct ProbeFlags {
  std::string test;
  std::string size;
  bool all_sizes = false;
  std::string min_bytes, max_bytes;
  double factor = 2;
  int iters = 0;    // 0: the test's default
  int warmup = -1;  // -1: the test's default
  int qps = 1;
  int tx_depth = 0;  // 0: the test's default
  int rx_depth = 512;
  int inline_size = -1;
  int cq_mod = 100;
  int mtu = 0;
  int gid_index = -1;
  std::string device;
  bool bidirectional = false;
  std::string pairs = "all";
  int qp_timeout = 14;
  int retry_count = 7;
  int rnr_retry = 7;
  int service_level = 0;
  int traffic_class = 0;
  int hop_limit = 64;
  int pkey_index = 0;
  bool no_bind = false;
  std::string mem = "host";     // --mem host|cuda|initiator,responder
  std::string loopback_budget;  // "": probes::default_loopback_budget_s
  double loopback_slow_pct = 25;
};

/// The probe name that runs each NIC's loopback (probes/loopback.hpp) instead of a rank pair.
inline constexpr std::string_view kLoopbackProbe = "loopback";

void add_probe_flags(CLI::App& app, ProbeFlags& f);

/// Flags -> options. `ranks` bounds --pairs. Throws UsageError.
probes::ProbeOptions to_options(const ProbeFlags& f, int ranks, double timeout_s);

/// `probe loopback`'s options. Throws UsageError.
probes::LoopbackOptions to_loopback_options(const ProbeFlags& f, double timeout_s);

/// The job body (job::run_job with JobTransport::kBootstrapOnly). Returns 0; for loopback 1
/// when a NIC failed.
int probe_body(job::JobContext& ctx, const ProbeFlags& flags);

}  // namespace ibscope::cli
