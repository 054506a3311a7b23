/// \file
/// A worker loop from a LibTorch module, a loss and a batch source: syncpoint
/// runs the loop (pull, the loss's gradient, push) under any protocol. The
/// module is a registered model (<syncpoint/torch_model.hpp>); the loss is
/// any scalar of it on a batch; the batches come from the job's data set, or
/// from a source of your own: a generator, a file reader, an environment.
///
/// ```cpp
/// // An autoencoder's loss: the mean squared error of its reconstruction.
/// syncpoint::torch_loop_spec autoencoder;
/// autoencoder.loss = [](syncpoint::torch_model& m, const syncpoint::torch_batch& b) {
///   return torch::mse_loss(m.forward(b.data), b.data.flatten(1));
/// };
/// syncpoint::register_torch_loop("reconstruct", autoencoder);  // batches: the job's data set (dataset_batches)
/// cfg.loop = "reconstruct";                                     // with a model whose forward() reconstructs
/// ```
///
/// Only files that define such a loop include this header (it pulls in LibTorch).
#pragma once

#include <syncpoint/torch_model.hpp>
#include <syncpoint/worker_loop.hpp>

#include <functional>
#include <memory>

namespace syncpoint {

/// Where one worker's batches come from. Each worker has its own, made with
/// the job's seed and the worker's id (loop_context); a checkpoint keeps its
/// position, so a resumed run draws what the whole run would have.
class batch_source {
 public:
  virtual ~batch_source() = default;
  /// The next batch, of `size` examples (the protocol's batch size; a source
  /// may give another count: the gradient is then charged and counted by it).
  /// Host tensors: the loop moves them to the model's device.
  virtual torch_batch next(int64_t size) = 0;
  /// Where the source stands (e.g. examples drawn, and its engine).
  virtual loop_state save() const { return {}; }
  /// Back to where save() found it.
  virtual void restore(const loop_state& s) { (void) s; }
};

/// Makes one worker's source.
using source_factory = std::function<std::unique_ptr<batch_source>(const loop_context&)>;

/// Batches of the job's data set, each worker on its own shard and in the
/// built-in loop's order: data [batch, example shape...] (float), target the
/// labels (int64).
source_factory dataset_batches();

/// Held-out metrics of the module as the evaluator loaded it (weights of one
/// version), e.g. a reconstruction error on the job's test set. The model
/// computes on its device (m.device(): the job's first GPU with --device
/// cuda): move the data there first.
using torch_evaluate_fn =
  std::function<std::vector<metric>(torch_model& m, const dataset& test, const loop_context& job)>;

/// A loop of a loss and a source (and, optionally, an evaluation).
struct torch_loop_spec {
  torch_model::loss_fn loss;                 ///< required: a scalar of the model on a batch
  source_factory source = dataset_batches(); ///< where the batches come from
  torch_evaluate_fn evaluate;                ///< none: the run reports its training loss only
};

/// Registers the loop `name` (job_config::loop, --loop); the job's model must
/// be a torch model. Returns false if the name is taken.
bool register_torch_loop(const std::string& name, torch_loop_spec spec);

}  // namespace syncpoint
