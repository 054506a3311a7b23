/// \file
/// Your own training loop, as ps-lite's workers and Ray's parameter-server
/// example write theirs: a function that pulls the weights, computes a
/// gradient any way it likes (LibTorch or not), pushes it, and goes on as the
/// protocol answers. syncpoint runs it on a thread of its own, one per worker,
/// in lockstep with the worker actor: while the loop computes, the worker
/// waits, and while the worker exchanges with the PS, the loop waits in
/// push(). So the protocol's rules, the link model and the clock are the
/// runtime's, and a virtual-clock run is still the same bytes every time.
///
/// ```cpp
/// // Fits y = w0 + w1 x by least squares, each worker on data of its own.
/// syncpoint::register_model("line", [] { return syncpoint::weights_only(2); });
/// syncpoint::register_client_loop("fit-line", [](syncpoint::worker_client& ps) {
///   std::mt19937_64 rng(ps.context().seed * 1000 + ps.context().worker);
///   std::normal_distribution<float> x_of, noise(0, 0.1f);
///   std::vector<float> g(2);
///   for (;;) {
///     std::vector<float> w = ps.pull().values;      // the weights of one version
///     g = {0, 0};
///     for (int i = 0; i < 32; ++i) {                // the mean squared error's gradient
///       float x = x_of(rng), y = 3 * x + 1 + noise(rng), e = w[0] + w[1] * x - y;
///       g[0] += e / 32, g[1] += e * x / 32;
///     }
///     if (ps.push(g, 32).stop)                       // answered when the protocol lets it go on
///       return;
///   }
/// });
/// cfg.model = "line";
/// cfg.loop = "fit-line";                            // or: syncpoint train --model line --loop fit-line
/// ```
///
/// A sparse model (model::tables(), docs/sparse.md) pulls the rows of the
/// keys its next step reads with the weights, and pushes their gradients:
///
/// ```cpp
/// for (;;) {
///   auto w = ps.pull({keys});                        // the rows of table 0's keys come in w.rows[0]
///   std::vector<float> grad(w.values.size(), 0.0f);  // the dense part's gradient
///   syncpoint::row_block g{0, w.rows[0].keys, w.rows[0].values};
///   for (auto& v : g.values)                         // each row's: here, of (v - 1)^2 / 2
///     v -= 1;
///   if (ps.push(grad, {g}, 32).stop)
///     return;
/// }
/// ```
#pragma once

#include <syncpoint/worker_loop.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint {

/// The weights of one version: the parameters, then the buffers.
struct pulled_weights {
  uint64_t version = 0;       ///< the PS updates in them (a local step, WBSP, moves them on in place)
  std::vector<float> values;  ///< model size floats
  std::vector<row_block> rows;  ///< pull(keys): by table, each key asked once (in any order), of the same version
};

/// What the protocol said to a push.
struct push_answer {
  bool stop = false;    ///< the job is over: return from the loop
  std::string refused;  ///< not empty: the PS dropped this gradient, and why (the loop goes on)
  uint64_t version = 0; ///< the version pull() gives now
};

/// One worker's handle on its job, given to a loop registered with
/// register_client_loop. Its calls come from the loop's own thread.
class worker_client {
 public:
  virtual ~worker_client() = default;
  /// The worker, its job's size, seed and batch.
  virtual const loop_context& context() const = 0;
  /// The weights of one version, as the protocol released them to this worker.
  virtual pulled_weights pull() = 0;
  /// Hands the gradient of a loss averaged over `samples` examples (model
  /// size floats: the parameters' gradient, then the buffers' values) to the
  /// PS, and returns when the protocol lets this worker go on, or the job
  /// ends. Throws std::invalid_argument for a gradient of the wrong length.
  virtual push_answer push(const std::vector<float>& grad, int64_t samples, float loss = 0) = 0;
  /// A sparse model's pull: the weights with the rows of `keys` (by table,
  /// model::tables()), one version. The keys go with the worker's pull when
  /// the protocol releases it, so the call returns once they came; after the
  /// job ended it returns nothing (and the next push says stop). Throws
  /// std::logic_error for a model without tables, or keys of another count of tables.
  virtual pulled_weights pull(const std::vector<std::vector<uint64_t>>& keys) = 0;
  /// ... and its push: the dense gradient as above, with the gradients of
  /// rows of the last pull (by table, a key once, width floats a key).
  /// Returns when the worker asks for the next step's keys (the next pull).
  virtual push_answer push(const std::vector<float>& grad, std::vector<row_block> row_grads, int64_t samples,
                           float loss = 0) = 0;
  /// The batch size now (the job's, unless the protocol changed it).
  virtual int64_t batch() const = 0;
  /// Gradients this worker pushed so far.
  virtual uint64_t step() const = 0;
  /// The learning rate the protocol's last release named (0: none yet; the PS applies the rate itself).
  virtual double lr() const = 0;
  /// Adds a number to the trace with the next push ("metric" events): the dashboard,
  /// /metrics and the report show it.
  virtual void report(const std::string& name, double value) = 0;
  /// Checkpoints: `save` is called while the loop waits in push(), and its
  /// bytes come back from resumed_state() when a run resumes from that
  /// checkpoint, at the loop's start, before its first pull. Resume is exact
  /// on the virtual clock when the loop's next gradient follows from the
  /// weights and that state alone.
  virtual void on_save(std::function<std::string()> save) = 0;
  /// The bytes `save` gave for the checkpoint this run resumed from (nothing
  /// on a fresh start, or when the checkpoint came before the loop's first push).
  virtual std::optional<std::string> resumed_state() const = 0;
};

/// A loop of your own: runs until push() says stop, then returns. An
/// exception out of it ends the job with its message ("user_loop_failed");
/// returning before the stop does too.
using client_loop_fn = std::function<void(worker_client&)>;

/// Registers `loop` as the loop `name` (job_config::loop, --loop), with an
/// optional evaluation of the weights it trains. Returns false if the name is taken.
bool register_client_loop(const std::string& name, client_loop_fn loop, evaluate_fn evaluate = {});

}  // namespace syncpoint
