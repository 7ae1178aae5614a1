// The collectives' descriptors (descriptor.hpp): each entry with its call layout and its
// verification, the only code that tells the collectives apart.
#include <algorithm>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/collectives/harness/call_layout.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts.hpp"

namespace ibscope::collectives {
namespace {

double reduce_all_factor(int p) { return 2.0 * (p - 1) / p; }
double share_factor(int p) { return static_cast<double>(p - 1) / p; }
double whole_factor(int) { return 1.0; }

std::size_t whole_blocks(std::size_t count, int p) {
  return pattern::alltoall_block_count(count, p) * static_cast<std::size_t>(p);
}

// Full vector in, full vector out (all-reduce, broadcast).
void full_in_full_out(CallLayout& l, std::byte* send, std::byte* recv, pattern::Span, std::size_t,
                      bool in_place) {
  l.args.sendbuf = in_place ? recv : send;
  l.input = in_place ? recv : send;
  l.input_count = l.args.count;
  l.output = recv;
  l.output_count = l.args.count;
}

// Full vector in, full vector out, and the output's block q is rank q's block for this rank:
// output_first is where that block sits in every sender's vector.
void exchange_blocks(CallLayout& l, std::byte* send, std::byte* recv, pattern::Span mine,
                     std::size_t es, bool in_place) {
  full_in_full_out(l, send, recv, mine, es, in_place);
  l.output_first = mine.offset;
}

// Full vector in, this rank's block out.
void full_in_block_out(CallLayout& l, std::byte* send, std::byte* recv, pattern::Span mine,
                       std::size_t es, bool in_place) {
  l.args.sendbuf = in_place ? recv : send;
  l.args.recvbuf = in_place ? recv + mine.offset * es : recv;
  l.input = in_place ? recv : send;
  l.input_count = l.args.count;
  l.output = static_cast<std::byte*>(l.args.recvbuf);
  l.output_count = mine.count;
  l.output_first = mine.offset;
}

// This rank's block in, full vector out.
void block_in_full_out(CallLayout& l, std::byte* send, std::byte* recv, pattern::Span mine,
                       std::size_t es, bool in_place) {
  l.args.sendbuf = in_place ? recv + mine.offset * es : send;
  l.input = in_place ? recv + mine.offset * es : send;
  l.input_count = mine.count;
  l.input_first = mine.offset;
  l.output = recv;
  l.output_count = l.args.count;
}

void fill_own_input(int rank, const VerifiablePattern& pattern, const CallLayout& l,
                    std::uint64_t seed) {
  pattern.fill_input(rank, l.input, l.input_count, l.input_first, seed);
}

// Each rank's block is its own vector, indexed from 0, so that two ranks' blocks differ in
// every element whatever the block size (verify.hpp); with the global offset, a block of L - K
// elements made rank 1's block equal rank 0's element by element.
void fill_block_input(int rank, const VerifiablePattern& pattern, const CallLayout& l,
                      std::uint64_t seed) {
  pattern.fill_input(rank, l.input, l.input_count, 0, seed);
}

void fill_root_input(int rank, const VerifiablePattern& pattern, const CallLayout& l,
                     std::uint64_t seed) {
  if (rank == l.args.root) pattern.fill_input(rank, l.input, l.input_count, 0, seed);
}

std::size_t wrong_reduced(int, const VerifiablePattern& pattern, const CallLayout& l,
                          std::uint64_t seed) {
  return pattern.count_wrong(l.output, l.output_count, l.output_first, seed);
}

std::size_t wrong_root_copy(int, const VerifiablePattern& pattern, const CallLayout& l,
                            std::uint64_t seed) {
  return pattern.count_wrong_input(l.args.root, l.output, l.output_count, 0, seed);
}

std::size_t wrong_gathered(int ranks, const VerifiablePattern& pattern, const CallLayout& l,
                           std::uint64_t seed) {
  std::size_t wrong = 0;
  const std::size_t es = size_of(l.args.type);
  for (int q = 0; q < ranks; ++q) {
    const pattern::Span b = block_of(l.args.count, ranks, q);
    // Each rank's block is its own vector, indexed from 0 (fill_block_input).
    wrong += pattern.count_wrong_input(q, l.output + b.offset * es, b.count, 0, seed);
  }
  return wrong;
}

// Block q of the output is rank q's input at this rank's block of its vector (inputs indexed
// over the whole send buffer, fill_own_input), so every element names its sender and place.
std::size_t wrong_exchanged(int ranks, const VerifiablePattern& pattern, const CallLayout& l,
                            std::uint64_t seed) {
  std::size_t wrong = 0;
  const std::size_t es = size_of(l.args.type);
  for (int q = 0; q < ranks; ++q) {
    const pattern::Span b = pattern::alltoall_block(l.args.count, ranks, q);
    wrong += pattern.count_wrong_input(q, l.output + b.offset * es, b.count, l.output_first, seed);
  }
  return wrong;
}

// All-to-all-v: packed blocks as the call's plan says, out of place only.
void exchange_counted_blocks(CallLayout& l, std::byte* send, std::byte* recv, pattern::Span,
                             std::size_t, bool) {
  const AlltoallvPlan* plan = l.args.counts;
  l.args.sendbuf = send;
  l.input = send;
  l.input_count = plan != nullptr ? plan->send_total : 0;
  l.output = recv;
  l.output_count = plan != nullptr ? plan->recv_total : 0;
}

// Block q of the output is rank q's input at the place its block for this rank has in q's send
// buffer (inputs indexed over the whole send buffer, fill_own_input).
std::size_t wrong_counted_exchange(int ranks, const VerifiablePattern& pattern, const CallLayout& l,
                                   std::uint64_t seed) {
  const AlltoallvPlan* plan = l.args.counts;
  if (plan == nullptr) return l.output_count;
  std::size_t wrong = 0;
  const std::size_t es = size_of(l.args.type);
  for (int q = 0; q < ranks; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    wrong += pattern.count_wrong_input(q, l.output + plan->recv_offsets[uq] * es,
                                       plan->recv_counts[uq], plan->source_offsets[uq], seed);
  }
  return wrong;
}

const std::vector<CollectiveDescriptor>& all_descriptors() {
  static const std::vector<CollectiveDescriptor> kDescriptors = {
      {.id = Collective::kAllreduce,
       .name = "allreduce",
       .aliases = {"all_reduce"},
       .prose = "All-reduce",
       .nccl_name = "allreduce",
       .summary = "All-reduce sweep, nccl-tests columns (time, algbw, busbw, #wrong)",
       .help_examples =
           "  ibscope allreduce --np 4 -b 8 -e 256M -f 2 -d float -o sum\n"
           "  ibscope allreduce --np 2 -d all -o all -b 1K -e 1M     # every type and op\n"
           "  ibscope allreduce --np 4 -A all -b 8 -e 64M           # every algorithm, "
           "crossovers\n"
           "  ibscope allreduce --np 4 -A auto --tuning results/ibscope-allreduce-....json\n"
           "  UCX_TLS=tcp ibscope allreduce --np 2 --format csv     # force UCX over TCP\n"
           "  srun --mpi=pmix -N 16 --ntasks-per-node=8 ibscope allreduce -e 1G\n",
       .reduces = true,
       .in_training_model = true,
       .busbw_factor = reduce_all_factor,
       .lay_out = full_in_full_out,
       .fill_input = fill_own_input,
       .count_wrong = wrong_reduced},
      {.id = Collective::kReduceScatter,
       .name = "reduce_scatter",
       .aliases = {"reducescatter", "reduce-scatter"},
       .prose = "Reduce-scatter",
       .nccl_name = "reducescatter",
       .summary = "Reduce-scatter sweep (size = the full vector; busbw = algbw x (p-1)/p)",
       .help_examples = "  ibscope reduce_scatter --np 4 -b 1K -e 64M\n"
                        "  ibscope reduce_scatter --np 4 -A all -d bfloat16 -o max\n"
                        "  srun --mpi=pmix -N 8 --ntasks-per-node=1 ibscope reducescatter -e 1G\n",
       .reduces = true,
       .in_training_model = true,
       .busbw_factor = share_factor,
       .lay_out = full_in_block_out,
       .fill_input = fill_own_input,
       .count_wrong = wrong_reduced},
      {.id = Collective::kAllgather,
       .name = "allgather",
       .aliases = {"all_gather"},
       .prose = "All-gather",
       .nccl_name = "allgather",
       .summary = "All-gather sweep (size = the full vector; busbw = algbw x (p-1)/p)",
       .help_examples = "  ibscope allgather --np 4 -e 256M\n"
                        "  ibscope allgather --np 3 --sizes 0,4,1M,64M -n 50\n"
                        "  mpirun -np 16 --map-by ppr:1:node ibscope all_gather -A all\n",
       .in_training_model = true,
       .busbw_factor = share_factor,
       .lay_out = block_in_full_out,
       .fill_input = fill_block_input,
       .count_wrong = wrong_gathered,
       .in_place_output_beyond_input = true},
      {.id = Collective::kBroadcast,
       .name = "broadcast",
       .aliases = {"bcast"},
       .prose = "Broadcast",
       .nccl_name = "broadcast",
       .summary = "Broadcast sweep from --root (busbw = algbw)",
       .help_examples =
           "  ibscope broadcast --np 4 --root 3 -e 256M\n"
           "  ibscope bcast --np 8 -A all -b 1K -e 64M\n"
           "  srun --mpi=pmix -N 16 --ntasks-per-node=1 ibscope broadcast -r 0 -e 1G\n",
       .has_root = true,
       .busbw_factor = whole_factor,
       .lay_out = full_in_full_out,
       .fill_input = fill_root_input,
       .count_wrong = wrong_root_copy,
       .in_place_output_beyond_input = true},
      {.id = Collective::kAlltoall,
       .name = "alltoall",
       .aliases = {"all_to_all", "a2a"},
       .prose = "All-to-all",
       .summary = "All-to-all sweep (size = one rank's whole send buffer, count/p elements to "
                  "each rank; busbw = algbw x (p-1)/p)",
       .help_examples = "  ibscope alltoall --np 4 -b 1K -e 64M\n"
                        "  ibscope alltoall --np 8 -A all -d bfloat16      # pairwise vs "
                        "scattered\n"
                        "  srun --mpi=pmix -N 16 --ntasks-per-node=8 ibscope alltoall -e 1G\n",
       .in_training_model = true,
       .busbw_factor = share_factor,
       .call_count = whole_blocks,
       .lay_out = exchange_blocks,
       .fill_input = fill_own_input,
       .count_wrong = wrong_exchanged},
      {.id = Collective::kAlltoallv,
       .name = "alltoallv",
       .aliases = {"all_to_allv", "a2av"},
       .prose = "All-to-all-v",
       .summary = "All-to-all-v sweep with per-peer counts (--counts: uniform, zipf:S[:seed] or a "
                  "file; size = the mean bytes one rank sends; busbw = algbw x (p-1)/p; "
                  "out of place)",
       .help_examples =
           "  ibscope alltoallv --np 4 -b 1K -e 64M --counts zipf:1.2     # MoE-like skew\n"
           "  ibscope alltoallv --np 8 -A all --counts counts.txt         # p x p matrix file\n"
           "  srun --mpi=pmix -N 16 --ntasks-per-node=8 ibscope a2av -A hier --counts zipf:1:7 "
           "-e 1G\n",
       .busbw_factor = share_factor,
       .lay_out = exchange_counted_blocks,
       .fill_input = fill_own_input,
       .count_wrong = wrong_counted_exchange,
       .has_in_place = false,
       .takes_counts = true},
  };
  return kDescriptors;
}

}  // namespace

std::span<const CollectiveDescriptor> descriptors() noexcept { return all_descriptors(); }

const CollectiveDescriptor& descriptor_of(Collective c) noexcept {
  for (const auto& d : all_descriptors()) {
    if (d.id == c) return d;
  }
  return all_descriptors().front();  // unreachable: every enum value has a descriptor (tested)
}

std::string collective_names(std::string_view last) {
  std::string out;
  const auto all = descriptors();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? last : std::string_view(", ");
    out += all[i].name;
  }
  return out;
}

}  // namespace ibscope::collectives

namespace ibscope {

std::string_view name_of(Collective c) noexcept { return collectives::descriptor_of(c).name; }

std::optional<Collective> collective_named(std::string_view name) noexcept {
  for (const auto& d : collectives::descriptors()) {
    if (d.name == name) return d.id;
  }
  return std::nullopt;
}

double busbw_factor(Collective c, int p) noexcept {
  if (p <= 1) return 0;
  return collectives::descriptor_of(c).busbw_factor(p);
}

bool reduces(Collective c) noexcept { return collectives::descriptor_of(c).reduces; }

}  // namespace ibscope
