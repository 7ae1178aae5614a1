#pragma once
/// A training workload: the transformer's shape, the batch, the parallel layout and how the
/// step computes and communicates. Read from a JSON workload file (docs/model.md, "Workload
/// file") or taken from a preset. Pure data plus validation; the formulas are in
/// model/transformer.hpp, the step in model/step_model.hpp.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope::model {

/// Parameter layout of a layer. kGpt: biases, LayerNorm (2h per norm), learned position
/// embeddings (s h), GeLU MLP with two matrices, embeddings tied to the output layer.
/// kLlama: no biases, RMSNorm (h per norm), rotary positions (no parameters), SwiGLU MLP with
/// three matrices of h x ffn_hidden, output layer not tied to the embedding.
enum class Architecture { kGpt, kLlama };

/// Activation recomputation (Korthikanti et al. 2022): kFull recomputes each layer's forward
/// in the backward pass (and its tensor-parallel collectives); kSelective recomputes only the
/// attention core (the two s^2 matrix products), which needs no communication.
enum class Recompute { kNone, kSelective, kFull };

/// What the data-parallel communication overlaps (rules: docs/model.md, "Overlap rule").
/// kNone: it runs after the backward pass. kGradReduce: gradient buckets are reduced while the
/// backward pass of the last micro-batch goes on. kGradReduceAndParamGather: also, with a
/// distributed optimizer, the parameter all-gather overlaps the next step's first forward.
enum class Overlap { kNone, kGradReduce, kGradReduceAndParamGather };

std::string_view name_of(Architecture a) noexcept;
std::string_view name_of(Recompute r) noexcept;
std::string_view name_of(Overlap o) noexcept;

/// Mixture-of-experts layers (docs/model.md, "Expert parallelism"): some layers replace the MLP
/// by `experts` expert MLPs of which each token uses `top_k` (plus `shared_experts` every token
/// uses), the experts spread over `ep` ranks; every such layer moves each token's activations to
/// its experts and back with two all-to-alls (dispatch, combine) per pass. Absent: a dense model.
struct Moe {
  int experts = 0;            ///< routed experts per MoE layer
  int top_k = 0;              ///< routed experts each token goes to
  int shared_experts = 0;     ///< experts every token also goes to (no all-to-all)
  int expert_ffn_hidden = 0;  ///< one expert's MLP width (Workload::ffn_hidden when not given)
  int first_dense = 0;        ///< the first layers keep a dense MLP
  int every = 1;              ///< after them, every N-th layer is an MoE layer
  int ep = 1;                 ///< expert-parallel size: ranks the experts are spread over
  /// Tokens an expert takes, as a multiple of an even share (GShard/Switch); the all-to-all
  /// carries the padded buffers. Absent: dropless, exactly top_k copies of each token.
  std::optional<double> capacity_factor;

  /// MoE layers among `layers`: ceil((layers - first_dense) / every), 0 when none is left.
  int moe_layers(int layers) const noexcept;
};

struct Workload {
  std::string name;
  std::string source;  ///< where the figures come from (paper, table); free text

  // Transformer shape.
  Architecture arch = Architecture::kGpt;
  int layers = 0;
  int hidden = 0;      ///< h
  int heads = 0;       ///< attention (query) heads
  int kv_heads = 0;    ///< key/value heads (grouped-query attention); == heads without GQA
  int ffn_hidden = 0;  ///< MLP inner width (4h for GPT; 28672 for Llama 3 70B)
  int seq_len = 0;     ///< s, tokens per sequence
  int vocab = 0;       ///< V

  // Batch, in sequences.
  int global_batch = 0;  ///< B: sequences per optimizer step
  int micro_batch = 0;   ///< b: sequences per micro-batch

  // Parallel layout (Megatron-LM order: tp fastest, then dp, then pp).
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int vp = 1;  ///< virtual pipeline stages (interleaved schedule) per pipeline rank
  int gpus_per_node = 1;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  /// Pipeline messages cut into t pieces, one per tensor rank, and gathered again inside the
  /// receiving node (Narayanan et al. SC21, scatter/gather optimization).
  bool pp_scatter_gather = true;

  // Precision, in bytes per element.
  int activation_bytes = 2;  ///< activations and their gradients (bf16: 2)
  int grad_bytes = 4;        ///< gradients as data parallelism reduces them (fp32: 4)
  int param_bytes = 2;       ///< parameters as a distributed optimizer all-gathers them

  // Compute: either a rate or a measured time.
  std::optional<double> peak_tflops;        ///< dense peak of one GPU, 1e12 FLOP/s
  std::optional<double> achieved_fraction;  ///< fraction of peak the compute reaches (0, 1]
  /// Measured compute of one micro-batch (forward + backward of one GPU's layers, no
  /// communication), seconds; when set it replaces FLOPs / (peak x achieved_fraction).
  std::optional<double> measured_compute_s_per_microbatch;
  Recompute recompute = Recompute::kNone;

  // Data-parallel communication.
  double bucket_bytes = 0;  ///< gradient bucket size (bytes of gradients per reduction call)
  Overlap overlap = Overlap::kGradReduce;

  std::optional<Moe> moe;  ///< absent: every layer has one dense MLP

  int gpus() const noexcept { return tp * pp * dp; }
  int nodes() const noexcept { return gpus() / gpus_per_node; }
  /// m: micro-batches per step on one pipeline, B / (b d).
  int microbatches() const noexcept { return global_batch / (micro_batch * dp); }
};

/// Checks every field and the relations between them (divisibility of the batch, the layers,
/// the heads; whole nodes; a rank placement that fills nodes evenly). Throws UsageError whose
/// message starts with `source` and names the field, e.g. "w.json: parallel.dp: ...".
void validate(const Workload& w, std::string_view source);

/// Reads a workload file; throws UsageError naming the file and the JSON path of a missing,
/// mistyped or inconsistent field ("w.json: parallel.tp: expected an integer, got string").
Workload load_workload(const std::filesystem::path& path);
/// Parses a workload file's text (what load_workload reads; the name is not filled in from the
/// file's). Throws UsageError.
Workload workload_from_text(std::string_view text, std::string_view source);
/// The file format of a workload (what load_workload reads back unchanged), keys in the
/// order of docs/model.md, indented by 2, no trailing newline.
std::string workload_json_text(const Workload& w);

/// Presets: gpt3-175b, gpt-530b, megascale-175b, llama3-70b, llama2-7b, mixtral-8x7b (figures and
/// sources: docs/model.md).
std::vector<std::string> preset_names();
/// Throws UsageError for an unknown name (the message lists the known ones).
Workload preset(std::string_view name);

}  // namespace ibscope::model
