// The NIC counter reader's cost: readings of this host's NICs (docs/counters.md, "Cost").
// Built as build/release/bench/ibscope_bench_counter_read; run it with an optional sysfs root.

#include <chrono>
#include <cstdio>

#include "ibscope/fabric/counters.hpp"

int main(int argc, char** argv) {
  ibscope::fabric::CounterReaderOptions o;
  if (argc > 1) o.sysfs_root = argv[1];
  const ibscope::fabric::CounterReader r(o);
  auto snap = r.read();
  std::size_t values = 0;
  for (auto& n : snap.nics) values += n.values.size();
  const int n = 2000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) snap = r.read();
  auto t1 = std::chrono::steady_clock::now();
  auto d = ibscope::fabric::counter_deltas(snap, r.read());
  auto t2 = std::chrono::steady_clock::now();
  std::printf("nics %zu values %zu read %.1f us delta %.1f us\n", snap.nics.size(), values,
              std::chrono::duration<double, std::micro>(t1 - t0).count() / n,
              std::chrono::duration<double, std::micro>(t2 - t1).count());
}
