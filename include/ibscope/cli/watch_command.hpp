#pragma once
/// `ibscope watch [--interval 1s] [--prom-dir DIR] [--log FILE] [--duration D] [-- CMD ARGS...]`
/// (docs/counters.md, "ibscope watch"): a per-node sampler of every NIC's counters beside a
/// real job. It reads the counters (fabric/counters.hpp) every interval against steady_clock,
/// sleeping in between; writes the node-exporter textfile and the JSONL log each interval; flags
/// error growth, flaps, congestion and rail imbalance on stderr as they appear; and with a
/// command runs it as a child, forwards SIGINT/SIGTERM/SIGHUP to it, takes a last reading when it
/// ends, prints the per-NIC summary and exits with its status.

#include <CLI/CLI.hpp>

#include "ibscope/cli/command.hpp"

namespace ibscope::cli {

Command add_watch_command(CLI::App& app);

}  // namespace ibscope::cli
