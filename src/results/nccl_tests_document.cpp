// nccl-tests runs as an ibscope results document (results/nccl_tests.hpp): the rows every
// reader of results files (fit, predict, model, report, compare) already understands.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "ibscope/core/datatype.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/results/nccl_tests.hpp"

namespace ibscope::results {
namespace {

std::optional<Collective> nccl_collective(std::string_view name) {
  if (name == "all_reduce") return Collective::kAllreduce;
  if (name == "all_gather") return Collective::kAllgather;
  if (name == "reduce_scatter") return Collective::kReduceScatter;
  if (name == "broadcast") return Collective::kBroadcast;
  if (name == "alltoall") return Collective::kAlltoall;
  // nccl-tests' alltoallv sends count/p to every rank: uniform counts, the size the mean.
  if (name == "alltoallv") return Collective::kAlltoallv;
  return std::nullopt;
}

std::optional<DataType> nccl_type(std::string_view name) {
  for (const DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kInt32,
                           DataType::kInt64, DataType::kFloat16, DataType::kBFloat16}) {
    if (name_of(t) == name) return t;
  }
  return std::nullopt;
}

// False for an op ibscope does not have (prod, avg, ...); "none" gives an empty `op`.
bool nccl_op(std::string_view name, std::optional<ReduceOp>& op) {
  op.reset();
  if (name == "none") return true;
  for (const ReduceOp o : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    if (name_of(o) == name) {
      op = o;
      return true;
    }
  }
  return false;
}

}  // namespace

Document to_document(const NcclTestsOutput& output, std::string_view source) {
  Document doc;
  doc.tool.name = "nccl-tests";
  doc.command.subcommand = output.runs.empty() ? "nccl-tests" : output.runs.front().program;
  doc.job.bootstrap = "nccl-tests";
  doc.environment.build = "nccl-tests";
  // What was left out, by reason, so that one line says it for all rows.
  std::map<std::string, int> skipped;
  for (const NcclTestsRun& run : output.runs) {
    if (doc.tool.version.empty()) doc.tool.version = run.version;
    const int ranks = run.rank_count();
    if (ranks > doc.job.ranks) {
      doc.job.ranks = ranks;
      doc.job.hosts.clear();
      for (const NcclTestsRank& r : run.ranks) doc.job.hosts.push_back(r.host);
      if (doc.job.hosts.size() != static_cast<std::size_t>(ranks)) doc.job.hosts.clear();
    }
    const auto collective = nccl_collective(run.collective);
    if (!collective) {
      skipped[fmt::format("{}: ibscope has no {} collective", run.program, run.collective)] +=
          static_cast<int>(run.rows.size());
      continue;
    }
    for (const NcclTestsRow& r : run.rows) {
      const auto type = nccl_type(r.type);
      std::optional<ReduceOp> op;
      const bool known_op = nccl_op(r.redop, op);
      if (!type || !known_op) {
        skipped[fmt::format("{}: type {} / op {} is not one ibscope has", run.program, r.type,
                            r.redop)] += 1;
        continue;
      }
      measure::CollectiveRow row;
      row.collective = *collective;
      row.algorithm = "nccl";
      row.selected_by = "nccl-tests";
      row.type = *type;
      row.op = op;
      row.root = *collective == Collective::kBroadcast ? std::max(0, r.root) : -1;
      row.in_place = r.in_place;
      row.mem = memory::MemKind::kCuda;
      row.mem_path = memory::MemPath::kDirect;
      row.size_bytes = r.size_bytes;
      row.count = r.count;
      row.ranks = ranks;
      row.time_us = r.time_us;
      row.average = measure::TimeAverage::kMean;
      row.algbw_gbps = r.algbw_gbps;
      row.busbw_gbps = r.busbw_gbps;
      row.wrong = r.wrong;
      // nccl-tests prints one time per size (the mean call of the timed loop): it is the row's
      // one sample, so fits and comparisons read it where they read ibscope's median.
      row.iteration_rank = 0;
      row.samples_us = {r.time_us};
      row.iteration_us = measure::summarize(row.samples_us);
      doc.add_row(row);
    }
  }
  for (const auto& [reason, rows] : skipped) {
    doc.add_warning(fmt::format("{}: {} row(s) not read ({})", source, rows, reason));
  }
  return doc;
}

}  // namespace ibscope::results
