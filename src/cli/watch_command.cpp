#include "ibscope/cli/watch_command.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/cli/child_process.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/interrupt.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/fabric/counters.hpp"
#include "ibscope/fabric/watch_state.hpp"
#include "ibscope/output/watch_prometheus.hpp"
#include "ibscope/output/watch_summary.hpp"
#include "ibscope/results/watch_log.hpp"

namespace ibscope::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWatchFooter =
    "Examples:\n"
    "  ibscope watch --interval 1s --prom-dir /var/lib/node_exporter/textfile\n"
    "  srun --ntasks-per-node=1 --overlap ibscope watch --prom-dir /run/node_exporter &  # per "
    "node\n"
    "  ibscope watch --interval 100ms --log nccl.jsonl -- all_reduce_perf -b 8 -e 8G -f 2 -g 8\n"
    "  ibscope watch --duration 10m --imbalance-pct 25 --log node.jsonl\n"
    "Without a command it samples until SIGINT/SIGTERM/SIGHUP or --duration, then prints the "
    "summary. Findings (error growth, flaps, congestion, a rail moving under --imbalance-pct of "
    "the node's median NIC over --imbalance-window while that median moves at least 1 MB/s) go "
    "to stderr as they appear and into every log line. Metrics, log fields and cost: "
    "docs/counters.md.\n"
    "Exit status: with a command, the command's (128+N killed by signal N; 127 not found, 126 "
    "not executable); without, 0 when stopped by a signal or --duration; 1 a file could not be "
    "written or the log exists (--append adds to it), 2 usage.";

struct WatchFlags {
  std::string interval = "1s";
  std::string prom_dir;
  std::string log;
  bool append = false;
  std::string duration;
  double imbalance_pct = 10;
  std::string imbalance_window = "10s";
  std::vector<std::string> rails;
  std::vector<std::string> command;
};

struct WatchPlan {
  double interval_s = 1;
  double duration_s = 0;  ///< 0: until a signal (or the command's end)
  fs::path prom_file;     ///< empty: none
  fabric::WatchThresholds thresholds;
};

WatchPlan plan_of(const WatchFlags& f) {
  WatchPlan p;
  p.interval_s = units::parse_duration_s(f.interval, "--interval");
  if (p.interval_s < 0.01 || p.interval_s > 3600) {
    throw UsageError(fmt::format("--interval {}: expected 10ms to 1h", f.interval));
  }
  if (!f.duration.empty()) {
    if (!f.command.empty()) {
      throw UsageError("--duration: for a watch without a command (with one, it ends with it)");
    }
    p.duration_s = units::parse_duration_s(f.duration, "--duration");
    if (p.duration_s <= 0) throw UsageError("--duration: expected a positive duration");
  }
  if (!f.prom_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(f.prom_dir, ec)) {
      throw UsageError(fmt::format("--prom-dir {}: not a folder", f.prom_dir));
    }
    p.prom_file = fs::path(f.prom_dir) / "ibscope_watch.prom";
  }
  p.thresholds.imbalance_fraction = f.imbalance_pct / 100;
  p.thresholds.imbalance_window_s =
      units::parse_duration_s(f.imbalance_window, "--imbalance-window");
  if (p.thresholds.imbalance_window_s < p.interval_s) {
    throw UsageError(fmt::format("--imbalance-window {}: shorter than --interval {}",
                                 f.imbalance_window, f.interval));
  }
  p.thresholds.rails = f.rails;
  return p;
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// node-exporter reads *.prom only: the new content goes to ibscope_watch.prom.<pid> first, then
// takes the name with rename(2), so the collector never reads half a file. No fsync: the file is
// replaced every interval and worthless after a crash of the host (write_file_replacing would
// add two fsyncs per interval).
void replace_textfile(const fs::path& file, const std::string& text) {
  const fs::path tmp = fs::path(file.string() + fmt::format(".{}", ::getpid()));
  std::FILE* out = std::fopen(tmp.c_str(), "we");
  if (out == nullptr) throw SystemError(fmt::format("cannot create {}", tmp.string()), errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const int e = errno;
  if (std::fclose(out) != 0 || !written) {
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot write {}", tmp.string()), written ? errno : e);
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int re = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot replace {}", file.string()), re);
  }
}

// Sleeps until `until`, or until the child ends (its pidfd becomes readable), or a signal
// interrupts the sleep (the handlers have no SA_RESTART). No busy wait: one ppoll.
void sleep_until(Clock::time_point until, int child_fd) {
  const auto left = until - Clock::now();
  if (left <= Clock::duration::zero()) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  pollfd fd{};
  fd.fd = child_fd;
  fd.events = POLLIN;
  ::ppoll(child_fd >= 0 ? &fd : nullptr, child_fd >= 0 ? 1 : 0, &ts, nullptr);
}

// Writes the interval's outputs. A file that cannot be written is reported once per message
// and the watch goes on: a full disk must not end the sampling of a running job.
class WatchOutputs {
 public:
  WatchOutputs(const WatchPlan& plan, std::optional<results::WatchLog> log, std::string host)
      : plan_(plan), log_(std::move(log)), host_(std::move(host)) {}

  void interval(const fabric::WatchState& state, const fabric::WatchInterval& iv) {
    const double now = unix_now_s();
    if (log_) {
      attempt([&] { log_->write(results::watch_log_line(iv, host_, now, state.elapsed_s())); });
    }
    if (!plan_.prom_file.empty()) {
      attempt([&] {
        replace_textfile(plan_.prom_file,
                         output::prometheus::exposition_text(
                             output::prometheus::watch_metrics(state, iv, host_, now)));
      });
    }
    for (const auto& f : iv.new_findings) {
      log::warn("watch {} {:.1f} s: {} {}: {}", host_, state.elapsed_s(), f.nic,
                fabric::name_of(f.kind), f.detail);
    }
  }
  bool failed() const noexcept { return !reported_.empty(); }

 private:
  template <typename F>
  void attempt(F&& write) {
    try {
      write();
    } catch (const Error& e) {
      if (reported_.insert(e.what()).second) log::error("{} (the watch goes on)", e.what());
    }
  }

  const WatchPlan& plan_;
  std::optional<results::WatchLog> log_;
  std::string host_;
  std::set<std::string> reported_;
};

int run_watch(const WatchFlags& f) {
  const WatchPlan plan = plan_of(f);
  const std::string host = bootstrap::local_hostname();
  std::optional<results::WatchLog> log;
  if (!f.log.empty()) log.emplace(f.log, f.append);  // refused before the command starts
  install_interrupt_handlers();

  const fabric::CounterReader reader;
  // Ticks at start + k * interval, start the first reading's: a slow reading delays one sample,
  // never the ones after it, and the log's elapsed_s stays on the grid.
  const auto start = Clock::now();
  fabric::WatchState state(plan.thresholds, reader.read());
  WatchOutputs outputs(plan, std::move(log), host);
  std::optional<ChildProcess> child;
  if (!f.command.empty()) {
    try {
      child.emplace(f.command);
    } catch (const ExecError& e) {
      log::error("{}", e.what());
      // The log this run created holds no line: gone, so the same command line can be rerun.
      if (!f.log.empty() && !f.append) ::unlink(f.log.c_str());
      return e.exit_status();
    }
  }
  log::info("watch {}: {} NICs every {} s{}{}", host, state.totals().size(), plan.interval_s,
            f.log.empty() ? "" : ", log " + f.log,
            plan.prom_file.empty() ? "" : ", metrics " + plan.prom_file.string());

  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan.interval_s));
  const auto end = plan.duration_s > 0 ? start + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(plan.duration_s))
                                       : Clock::time_point::max();
  auto next = start + interval;
  std::optional<int> child_status;
  bool forwarded = false;
  for (;;) {
    sleep_until(std::min(next, end), child ? child->pollable_fd() : -1);
    bool last = false;
    if (const int sig = interrupt_signal(); sig != 0 && !forwarded) {
      forwarded = true;
      if (!child) {
        last = true;
      } else if (!terminal_sent_to_group(sig)) {
        log::info("watch: {} forwarded to the command (pid {})", signal_name(sig), child->pid());
        child->signal(sig);
      }
    }
    if (child) {
      child_status = child->poll();
      last = last || child_status.has_value();
    }
    const auto now = Clock::now();
    if (now >= end) last = true;
    if (!last && now < next) continue;  // woken early (a signal already handled)
    const fabric::WatchInterval iv = state.add(reader.read());
    outputs.interval(state, iv);
    if (last) break;
    while (next <= Clock::now()) next += interval;  // a missed tick is skipped, not caught up
  }
  fmt::print("{}", output::watch_summary(state, host));
  std::fflush(stdout);
  if (child_status) return *child_status;
  return outputs.failed() ? 1 : 0;
}

}  // namespace

Command add_watch_command(CLI::App& app) {
  auto f = std::make_shared<WatchFlags>();
  auto* sub = app.add_subcommand(
      "watch",
      "Per-node sampler of every NIC's counters beside a real job (one per node): Prometheus "
      "textfile and JSONL log every interval, error growth, flaps, congestion and rail "
      "imbalance flagged as they appear; '-- CMD' runs the command and prints a per-NIC "
      "summary when it ends");
  sub->add_option("--interval", f->interval,
                  "Time between readings: seconds or 100ms/1s/1m (10ms to 1h)")
      ->default_val(f->interval)
      ->type_name("DURATION");
  sub->add_option("--prom-dir", f->prom_dir,
                  "Folder of node-exporter's textfile collector: ibscope_watch.prom is replaced "
                  "there every interval (default: none)")
      ->type_name("DIR");
  sub->add_option("--log", f->log,
                  "JSONL log: one line per interval, written as it ends; must not exist unless "
                  "--append (default: none)")
      ->type_name("FILE");
  sub->add_flag("--append", f->append, "Add to an existing --log instead of refusing it");
  sub->add_option("--duration", f->duration,
                  "Without a command: stop after this long, seconds or 90s/30m/8h (default: "
                  "until SIGINT/SIGTERM)")
      ->type_name("DURATION");
  sub->add_option("--imbalance-pct", f->imbalance_pct,
                  "Rail imbalance: flag a NIC moving under this percent of the median NIC of "
                  "its node (0: off)")
      ->default_val(f->imbalance_pct)
      ->check(CLI::Range(0.0, 100.0));
  sub->add_option("--imbalance-window", f->imbalance_window,
                  "Rail imbalance: the rates compared are over this window")
      ->default_val(f->imbalance_window)
      ->type_name("DURATION");
  sub->add_option("--rails", f->rails,
                  "Rail imbalance: compare only these NICs (comma list of ports mlx5_0:1, devices "
                  "mlx5_0 or interfaces; default: every RDMA port, or the interfaces that carried "
                  "traffic)")
      ->delimiter(',')
      ->type_name("LIST");
  sub->add_option("command", f->command,
                  "The command to run and watch, after -- (default: none, watch until stopped)")
      ->type_name("CMD ARGS");
  sub->footer(kWatchFooter);
  return {sub, [f]() -> int { return run_watch(*f); }};
}

}  // namespace ibscope::cli
