#include "ibscope/collectives/allreduce_sweep.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "ibscope/collectives/verify.hpp"
#include "ibscope/core/aligned_buffer.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/timing.hpp"

namespace ibscope {

int fault_corrupt_rank_from_env() {
  const char* v = std::getenv("IBSCOPE_FAULT_CORRUPT_RANK");
  return v != nullptr && *v != '\0' ? std::atoi(v) : -1;
}

namespace {

CollectiveRow make_row(const ucx::Comm& comm, const std::string& algorithm, DataType type,
                       ReduceOp op, bool in_place, std::uint64_t bytes,
                       const std::vector<double>& samples_s,
                       std::optional<std::uint64_t> wrong) {
  CollectiveRow row;
  row.collective = "allreduce";
  row.algorithm = algorithm;
  row.type = std::string(name_of(type));
  row.op = std::string(name_of(op));
  row.in_place = in_place;
  row.size_bytes = bytes;
  row.count = bytes / size_of(type);
  row.ranks = comm.size();
  row.samples_us.reserve(samples_s.size());
  for (double s : samples_s) row.samples_us.push_back(s * 1e6);
  row.time_us = summarize(row.samples_us);
  row.algbw_gbps = units::to_gb_per_s(static_cast<double>(bytes), row.time_us.mean * 1e-6);
  row.busbw_gbps = row.algbw_gbps * allreduce_busbw_factor(comm.size());
  row.wrong = wrong;
  return row;
}

}  // namespace

void run_allreduce_sweep(ucx::Comm& comm, const AllreduceSweepOptions& o,
                         const CollectiveRowsSink& sink) {
  Bootstrap& boot = comm.bootstrap();
  std::uint64_t max_bytes = 0;
  for (DataType t : o.types) {
    for (auto b : sweep_sizes(o.sweep, size_of(t))) max_bytes = std::max(max_bytes, b);
  }
  AlignedBuffer send(max_bytes), recv(max_bytes);
  const int corrupt_rank = fault_corrupt_rank_from_env();

  for (const std::string& algo_name : o.algorithms) {
    const auto& info = find_allreduce_algorithm(algo_name);
    auto algo = info.create(comm, o.algorithm_options);
    for (DataType type : o.types) {
      const std::size_t es = size_of(type);
      for (ReduceOp op : o.ops) {
        const VerifiablePattern pattern(type, op, comm.size());
        for (std::uint64_t bytes : sweep_sizes(o.sweep, es)) {
          const std::size_t count = bytes / es;
          std::vector<CollectiveRow> rows;
          for (bool in_place : {false, true}) {
            if ((in_place && !o.in_place) || (!in_place && !o.out_of_place)) continue;
            AllreduceArgs args{in_place ? recv.data() : send.data(), recv.data(), count, type, op};
            const std::string what =
                fmt::format("allreduce {} {} {} {} B {}", algo_name, name_of(type), name_of(op),
                            bytes, in_place ? "in-place" : "out-of-place");
            std::optional<std::uint64_t> wrong;
            if (o.check) {
              pattern.fill_input(comm.rank(), in_place ? recv.data() : send.data(), count);
              if (!in_place) pattern.fill_poison(recv.data(), count);
              boot.barrier(what);
              algo->run(args, Deadline(o.timeout_s));
              if (corrupt_rank == comm.rank() && count > 0) {
                recv.data()[(count / 2) * es] ^= std::byte{0x40};
              }
              wrong = sum_over_ranks(boot, pattern.count_wrong(recv.data(), count), what);
            }
            boot.barrier(what);
            const auto local = time_iterations(o.warmup, o.iters, [&] {
              algo->run(args, Deadline(o.timeout_s));
            });
            const auto samples = max_over_ranks(boot, local, what);
            rows.push_back(make_row(comm, algo_name, type, op, in_place, bytes, samples, wrong));
          }
          sink(rows);
        }
      }
    }
  }
}

}  // namespace ibscope
