/// \file
/// A worker's loop: what each worker of a job computes between its pull and
/// its push. The built-in one ("classify") draws batches of the job's data set
/// and takes the model's cross-entropy; register your own for any other loss,
/// data of your own, or an environment that makes it. Gating, staleness, shards,
/// the link model and the clock stay the runtime's: a registered loop runs
/// under every protocol with the same rules as the built-in one.
///
/// Three ways to write one, from the most control to the least:
///  - a class derived from worker_loop, registered here (this header);
///  - a blocking loop of your own around a worker_client (<syncpoint/worker_client.hpp>),
///    computing its gradient any way it likes, with LibTorch or without;
///  - a LibTorch module, a loss and a batch source (<syncpoint/torch_loop.hpp>).
///
/// ```cpp
/// struct half_squares : syncpoint::worker_loop {  // the gradient of sum (w_i - 1)^2 / 2
///   syncpoint::step_result step(syncpoint::model& m, const syncpoint::step_input&, float* grad) override {
///     auto w = m.current_weights();
///     float loss = 0;
///     for (size_t i = 0; i < w.size(); ++i) { grad[i] = w[i] - 1; loss += grad[i] * grad[i] / 2; }
///     return {loss, 1};
///   }
/// };
/// syncpoint::register_loop("half-squares", [](const syncpoint::loop_context&) {
///   return std::make_unique<half_squares>();
/// });
/// cfg.loop = "half-squares";  // with a model of weights only: cfg.model = a weights_only() model's name
/// ```
#pragma once

#include <syncpoint/messages.hpp>
#include <syncpoint/model.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint {

/// What a worker's loop is made for.
struct loop_context {
  int worker = 0;                          ///< this worker, 0 .. workers - 1
  int workers = 1;                         ///< the job's workers
  uint64_t seed = 1;                       ///< the job's seed (derive a worker's own from it and `worker`)
  int batch = 64;                          ///< the job's batch size
  std::shared_ptr<const dataset> train;    ///< the job's training set (a loop with data of its own may ignore it)
  model_input input;                       ///< what the job's model was made for, and its device
  double timeout_s = 600;                  ///< wall seconds a step may take before the worker ends (--request-timeout)
};

/// What the worker knows when it asks for a gradient.
struct step_input {
  int64_t batch = 0;     ///< the batch size now (the job's, unless the protocol changed it)
  uint64_t version = 0;  ///< the version of the weights the model holds (a local step moves them on)
  uint64_t step = 0;     ///< gradients this worker pushed before
  double lr = 0;         ///< the learning rate the last release named (0: none named yet)
  std::string refused;   ///< not empty: the PS refused the previous gradient, and why
  /// A sparse model: the rows this step's pull brought (by table, the keys
  /// keys() gave, each once), which the model holds too; valid during step().
  const std::vector<row_block>* rows = nullptr;
};

/// One gradient, computed.
struct step_result {
  float loss = 0;               ///< its loss, traced with the compute span
  int64_t samples = 0;          ///< the examples (or steps of experience) it averages: epochs count these
  std::vector<metric> metrics;  ///< anything else to trace, as "metric" events
  /// A sparse model's loop that computes the rows' gradients itself (a loop
  /// of your own): them, by table, for keys of this step's pull. Unset: the
  /// model's (model::row_gradients()).
  std::optional<std::vector<row_block>> row_gradients;
};

/// A saved loop: where its data stands (draws, steps) and any bytes of its own.
struct loop_state {
  uint64_t position = 0;  ///< how far its data went: examples drawn, steps taken
  std::string bytes;      ///< anything else it needs to go on exactly (an engine's state)
};

/// One worker's loop. The worker calls step() once per gradient, always on
/// one thread at a time; a loop throwing from any call ends the worker with
/// its message ("user_loop_failed").
class worker_loop {
 public:
  virtual ~worker_loop() = default;
  /// Writes one gradient at the weights `m` holds into `grad` (m.size()
  /// floats: the parameters' gradient, then the buffers' values after the
  /// forward pass, m.buffers() of them) and says what it averaged.
  virtual step_result step(model& m, const step_input& in, float* grad) = 0;
  /// A push is on its way and the worker waits: a chance to get the next
  /// batch of `batch` ready (and stage it with m.stage). Optional.
  virtual void prepare(model& m, int64_t batch) { (void) m, (void) batch; }
  /// A sparse model's loop (model::tables()): the keys of each table that the
  /// next step() of `batch` reads, asked before the pull that precedes it; the
  /// worker pulls their rows with the weights and loads them (model::load_rows).
  /// The default: none (a loop for dense models).
  virtual std::vector<std::vector<uint64_t>> keys(model& m, int64_t batch) {
    (void) m, (void) batch;
    return {};
  }
  /// What a checkpoint keeps of the loop: a resumed run continues exactly
  /// when restore() puts the loop where save() found it.
  virtual loop_state save() const { return {}; }
  /// Back to where save() found the loop (a resumed run, before its first step).
  virtual void restore(const loop_state& s) { (void) s; }
};

/// An error's first line: what a failed loop's message keeps (LibTorch's
/// errors carry a backtrace after it).
inline std::string first_line(const std::string& what) {
  return what.substr(0, what.find('\n'));
}

/// Makes one worker's loop.
using loop_factory = std::function<std::unique_ptr<worker_loop>(const loop_context&)>;

/// Held-out metrics of the weights `m` holds: on the job's test set, or on
/// data of the loop's own made from `job` (its seed; job.worker is -1 there).
/// An "accuracy" among them is the run's accuracy (targets, time to target).
using evaluate_fn = std::function<std::vector<metric>(model& m, const dataset& test, const loop_context& job)>;

/// A loop as registered: its factory, and how the evaluator measures the
/// weights it trains (none: the run reports its training loss and metrics only).
struct loop_spec {
  loop_factory make;     ///< required: one worker's loop
  evaluate_fn evaluate;  ///< optional: the evaluator's measure of the weights
  /// Optional: throws std::invalid_argument, saying why, for a model the loop
  /// cannot train; a job of such a model is refused before it starts.
  std::function<void(model& m)> check;
};

/// Adds a loop under `name` (a job names it: job_config::loop, --loop).
/// Returns false if the name is taken. On a cluster, every node that runs
/// the job's workers must register it (docs/cluster.md, "Your own node program").
bool register_loop(const std::string& name, loop_spec spec);
/// As above, with no evaluation of its own.
bool register_loop(const std::string& name, loop_factory make);

/// The loop registered as `name`; throws std::invalid_argument listing the known names.
loop_spec find_loop(const std::string& name);

/// Every registered loop's name, sorted ("classify" is built in).
std::vector<std::string> loop_names();

/// A model that is only its weights: `n` floats from `init(seed)` (zeros
/// without one), all parameters. It computes no gradient and predicts nothing
/// itself: a loop of your own trains it.
///
/// ```cpp
/// syncpoint::register_model("line", [] { return syncpoint::weights_only(2); });
/// ```
std::unique_ptr<model> weights_only(size_t n, std::function<std::vector<float>(uint64_t seed)> init = {});

}  // namespace syncpoint
