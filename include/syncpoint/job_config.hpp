/// \file
/// Everything one training run needs. The CLI fills it from flags; a program
/// fills it directly and calls `syncpoint::train`.
#pragma once

#include <syncpoint/protocol.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint {

/// Bad configuration or input (unknown protocol, malformed straggler spec,
/// missing data file, ...). The message says what is wrong.
struct config_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// The run's clock: wall time, or virtual time (deterministic: every run of a config is the same bytes).
enum class clock_kind : uint8_t { real, virtual_time };

/// "real" or "virtual".
inline std::string to_string(clock_kind c) {
  return c == clock_kind::real ? "real" : "virtual";
}

/// The epochs a run with only a target accuracy stops after if it never reaches it.
inline constexpr double target_only_epoch_cap = 100;

namespace detail {

/// What the CLI's testing options and `syncpoint simulate` set in a job: not
/// a program's API, and it may change in any release (docs/api.md, "detail").
struct job_internals {
  /// Virtual clock: the iteration cost measured on this machine instead of
  /// the model's reference (not reproducible; `--iter-cost measure`).
  bool measure_iter_cost = false;
  /// Bytes each push and pull is charged on the PS link (0: its size;
  /// `simulate` charges the simulated model's size).
  double wire_bytes = 0;
  /// Fault injection: worker `fail_worker` dies instead of pushing iteration
  /// `fail_at_iter` (CLI: `--fail-worker W@K`). -1: nobody fails.
  int fail_worker = -1;
  uint64_t fail_at_iter = 0;  ///< the iteration it dies at (1-based)
  /// ... and copies of PS shards die with it, in this order, as if they shared
  /// its host (CLI: `--fail-shard 1` shard 1's primary, `1.2` copy 2 of shard 1,
  /// `1.1,1` both; needs --ps-replicas). "": none.
  std::string fail_shard;
};

}  // namespace detail

/// Everything a job is made of: the protocol and its options, model, data, workers, limits,
/// optimizer, clock, stragglers, checkpoints, output and (for `syncpoint submit`) placement.
/// The defaults are the command's (`syncpoint train --help`).
struct job_config {
  std::string protocol = "bsp";  ///< a registered protocol (`syncpoint protocols`)
  protocol_options protocol_opts;  ///< its options by name (e.g. "staleness")
  int workers = 4;  ///< 1..4096
  std::string model = "mlp";  ///< a registered model: "softmax", "mlp", "cnn", "script:FILE.pt", or your own
  /// A LibTorch model's loss instead of cross-entropy: "script:FILE.pt", a scripted function of
  /// (output, target) returning a scalar (empty: cross-entropy).
  std::string loss;
  /// What each worker computes between pull and push (<syncpoint/worker_loop.hpp>):
  /// "classify" (the data set's batches, the model's cross-entropy), or a registered loop of your own.
  std::string loop = "classify";

  /// Data: a registered data set (<syncpoint/data_registry.hpp>): "fashion-mnist",
  /// "idx" and "cifar10" (files in data_dir; "": the set's default folder),
  /// "synthetic", "blank" (one zero feature per example: timing-only runs), or
  /// a user's own.
  std::string dataset = "fashion-mnist";
  std::string data_dir;  ///< the data set's folder ("": its default)
  int64_t train_limit = 0;  ///< use only the first N training examples (0: all)
  int64_t test_limit = 0;   ///< evaluate on the first N test examples (0: all)
  int context = 64;         ///< a text data set's window: characters of context each example holds

  /// Stop at the first limit reached among those set (> 0). With none set,
  /// the run stops at `target_accuracy` (or after target_only_epoch_cap epochs
  /// if it is never reached), or after 1 epoch if that is unset too.
  double epochs = 0;            ///< samples processed / training-set size
  double max_time_s = 0;        ///< on the run's clock
  double target_accuracy = 0;   ///< also reported as time_to_target_s
  bool stop_at_target = false;  ///< stop when the target is reached even if other limits are set

  /// The optimizer on the PS (docs/optimizers.md): sgd, nesterov, adam or adamw.
  std::string optimizer = "sgd";
  double lr = 0.05;  ///< the learning rate
  double momentum = 0.9;       ///< sgd, nesterov
  double beta1 = 0.9;          ///< adam, adamw
  double beta2 = 0.999;  ///< adam, adamw
  double eps = 1e-8;  ///< adam, adamw
  double weight_decay = 0.0;   ///< L2 (sgd, nesterov, adam); decoupled (adamw)
  /// adjusted: stale pushes weigh less and momentum follows the steps workers
  /// see (docs/momentum.md); plain: every update is a momentum step.
  std::string momentum_rule = "adjusted";
  /// The learning rate by samples taken in (docs/optimizers.md): constant,
  /// step (times lr_gamma at each of lr_milestones, in epochs) or cosine (to
  /// lr_min over lr_epochs, by default the run's epochs); a warmup ("": none,
  /// a share of the run below 1, or a number of samples); lr_scaling "linear"
  /// multiplies lr by workers x batch / 256 (Goyal et al.), and a warmup then
  /// starts from the unscaled rate.
  std::string lr_schedule = "constant";
  std::vector<double> lr_milestones;  ///< step: epochs at which lr is multiplied by lr_gamma
  double lr_gamma = 0.1;  ///< step: the factor
  std::string warmup;  ///< "": none; below 1: a share of the run; else samples
  std::string lr_scaling = "none";  ///< "none" or "linear"
  double lr_epochs = 0;  ///< cosine: its length in epochs (0: the run's)
  double lr_min = 0;  ///< cosine: the rate it ends at
  /// Each pushed gradient scaled to at most this global L2 norm (0: never).
  double clip_norm = 0;
  /// How each pushed gradient is compressed on its way to the PS, with error
  /// feedback (docs/compression.md): "none", "fp16", "bf16", "topk:R",
  /// "randomk:R" (R in (0, 1]: the share of values sent), "onebit", or a
  /// compressor of the program's own (<syncpoint/compressor.hpp>).
  std::string compress = "none";
  /// A sparse model's rows (docs/sparse.md): "same", taken in as the protocol
  /// takes the dense part (a barrier's round steps them with it), or "async",
  /// stepped as each push arrives whatever the protocol does with the dense
  /// part (Persia's hybrid: bsp for the dense layers, asp for the embeddings).
  std::string sparse_sync = "same";
  int batch = 64;  ///< examples per gradient

  /// Where workers and the evaluator compute (docs/gpu.md): "cpu", "cuda"
  /// (the visible GPUs shared round robin), "cuda:N", or "auto" (cuda if the
  /// LibTorch has it and a GPU is visible, else cpu).
  std::string device = "cpu";
  /// "fp32", or "bf16": the forward and backward under CUDA autocast; the
  /// gradients the PS gets and the weights it keeps stay fp32.
  std::string precision = "fp32";

  uint64_t seed = 1;  ///< every random choice of the run follows it
  clock_kind clock = clock_kind::virtual_time;  ///< virtual: reproducible bit for bit; real: wall time
  std::string straggler;       ///< slow workers, e.g. "3:x4" (worker 3 four times slower): `syncpoint train --help`
  double iter_cost_ms = 0;     ///< virtual clock: cost of one iteration; 0 = the model's reference cost
  int ps_shards = 0;           ///< the PS as this many shards, each a contiguous range of the model
                               ///< (0: one, or with ps_placement "nodes" one per node hosting workers)
  /// Replicas of each PS shard beside its primary (0, 1 or 2): each takes every push and the
  /// coordinator's sequence, and serves when its primary is lost (docs/architecture.md, "Replicated shards").
  int ps_replicas = 0;
  /// With replicas: a lost copy is replaced by a new one, made from its shard's serving copy
  /// while the run holds still, so the shard keeps R replicas (docs/architecture.md, "Replacing a lost copy").
  bool ps_rereplicate = false;
  double ps_bandwidth = 0;     ///< bytes/s of each PS shard's link, shared by its transfers (0: unlimited)
  double ps_memory = 0;        ///< bytes of sparse rows each PS shard may hold (0: no limit; docs/sparse.md)
  double latency_ms = 0;       ///< added to every transfer to or from the PS
  double eval_every = 0.25;    ///< evaluate every this many epochs of samples (0: only at the end)
  double request_timeout_s = 600;  ///< real clock: a push or pull unanswered this long ends its worker
  int threads = 0;                 ///< real clock: scheduler threads (0: min(workers, cores))

  /// Checkpoints (docs/cluster.md, "Checkpoints"): every `checkpoint_every_s`
  /// on the run's clock into `checkpoint_dir`, keeping the newest
  /// `checkpoint_keep` (0: all). On the real clock a checkpoint_request (or
  /// SIGUSR1 to `syncpoint submit` and `launch`) takes one into
  /// `checkpoint_dir` at once, with or without a period. `resume_dir`: continue from the newest
  /// checkpoint there (or from that file); only the limits may differ from
  /// the checkpointed run.
  double checkpoint_every_s = 0;
  std::string checkpoint_dir;  ///< where checkpoints go
  int checkpoint_keep = 3;  ///< the newest kept (0: all)
  std::string resume_dir;  ///< continue from its newest checkpoint ("": start afresh)

  std::string out_dir;  ///< empty: write nothing
  bool progress = true; ///< progress lines on stderr

  /// Cluster (syncpoint submit): how workers are placed on nodes, spread or pack.
  std::string placement = "spread";
  /// Where the PS shards run: "head" (with the coordinator) or "nodes" (with
  /// the workers, shard k on the k-th node hosting workers, round robin).
  std::string ps_placement = "head";
  /// Elastic: start with the free slots if fewer than `workers`, and grow (or
  /// bring lost workers back) as nodes with free slots join.
  bool elastic = false;

  detail::job_internals internals;  ///< the CLI's testing options and simulate's (not a program's API)
};

// A job travels from `syncpoint submit` to the head, so it is inspectable: every
// field, in declaration order (the internals' last) (tests/test_job_schema.cpp checks both against
// the table of fields, core/job_schema.hpp).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_config& x) {
  return f(caf::meta::type_name("job_config"), x.protocol, x.protocol_opts, x.workers, x.model, x.loss, x.loop,
           x.dataset, x.data_dir, x.train_limit, x.test_limit, x.context, exact(x.epochs), exact(x.max_time_s),
           exact(x.target_accuracy), x.stop_at_target, x.optimizer, exact(x.lr), exact(x.momentum), exact(x.beta1),
           exact(x.beta2), exact(x.eps), exact(x.weight_decay), x.momentum_rule, x.lr_schedule,
           exact_list{x.lr_milestones}, exact(x.lr_gamma), x.warmup, x.lr_scaling, exact(x.lr_epochs),
           exact(x.lr_min), exact(x.clip_norm), x.compress, x.sparse_sync, x.batch, x.device, x.precision, x.seed,
           x.clock, x.straggler, exact(x.iter_cost_ms), x.ps_shards, x.ps_replicas, x.ps_rereplicate,
           exact(x.ps_bandwidth), exact(x.ps_memory), exact(x.latency_ms), exact(x.eval_every),
           exact(x.request_timeout_s), x.threads, exact(x.checkpoint_every_s), x.checkpoint_dir, x.checkpoint_keep,
           x.resume_dir, x.out_dir, x.progress, x.placement, x.ps_placement, x.elastic,
           x.internals.measure_iter_cost, exact(x.internals.wire_bytes), x.internals.fail_worker,
           x.internals.fail_at_iter, x.internals.fail_shard);
}

}  // namespace syncpoint
