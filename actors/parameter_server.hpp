// The parameter server: holds the flat model, applies pushes with SGD
// (momentum, weight decay) on Eigen, and answers versioned pulls. A shard of a
// sharded PS (core/ps_group.hpp) is the same actor over its range of the model:
// pushes carry its slice of the gradient, pulls are answered with its slice of
// the weights. Shard 0, the lead, hands each push to the coordinator, whose
// `proceed` answers the worker; every other shard replies with an empty
// `proceed` at once and tells the coordinator (pushed_atom, push_info, shard),
// so the coordinator acts on a push once every shard holds it.
//
// Messages (interface: ps_actor in core/interfaces.hpp):
//   (push_atom, gradient_push)  -> proceed  (delegated to the coordinator) | error
//   (pull_atom, uint64 min_version) -> weights, once version >= min_version
//   (attach_atom, coordinator, workers)  the job's members: from then on only
//                   these workers may push and pull (anyone else gets a
//                   not_a_member error) and only this coordinator may send
//                   the control messages below (anyone else is refused and logged)
//   (mode_atom, uint8_t ps_mode)
//   (publish_atom)  gated mode: pulls now see the current weights
//   (commit_atom)   apply the buffer as one mean step; always a new version
//   (flush_atom)    apply the buffer if anything is in it
//   (stop_atom)     answer every waiting pull now (the run is stopping)
//   (weights_atom, std::vector<float> per-worker weights)
//   (momentum_atom, mu, clear, ramp_steps)  momentum from now on (clear: reset
//                   the velocity; ramp_steps > 0: rise from 0 to mu over that many updates)
//   (snapshot_atom, evaluator, uint64 samples, bool final, uint64 id)  the id: the coordinator's, one per snapshot
//   (final_atom) -> weights   the current model, whatever the mode
//   (save_atom) -> saved_ps   its state for a checkpoint
//   (push_atom | pull_atom, resume_atom, ...)  a resumed worker takes over
//                   the place its push or pull held (core/saved_state.hpp)
//   (replica_atom)  a replica is its shard's primary from now on
// A push of the wrong length, from an unknown worker, or holding NaN/Inf gets
// an error reply and changes nothing. With a link model, a push is handled
// once its bytes have crossed the link, and a reply with weights is delivered
// once they have crossed back (core/link_model.hpp).
#pragma once

#include "core/clock.hpp"
#include "core/interfaces.hpp"
#include "core/optimizer.hpp"
#include "core/ps_group.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace syncpoint {

/// How the optimizer treats updates outside a synchronous round (docs/momentum.md).
///   adjusted: a push `tau` updates stale weighs 1/(1 + tau/n) of its share;
///             momentum applies once per step the workers can see (per round
///             when pulls are gated, per push when pushes apply at once), and
///             per push it is reduced by the mean staleness:
///             mu' = max(0, 1 - (1 - mu)(1 + mean_tau/n)).
///   plain:    every update is a momentum step of weight 1/n (the textbook rule).
enum class momentum_rule : uint8_t { adjusted, plain };

struct ps_config {
  std::vector<float> initial;
  double lr = 0.05;            // unless `schedule` varies
  double momentum = 0.9;       // sgd, nesterov
  double weight_decay = 0.0;   // L2 (sgd, nesterov, adam) or decoupled (adamw)
  int workers = 1;          // each push starts with weight 1/workers
  tracer_actor tracer;      // may be invalid: no trace
  time_point origin;
  double bandwidth = 0;     // bytes/s of the PS link (0: unlimited)
  double latency_s = 0;     // added to every transfer
  momentum_rule rule = momentum_rule::adjusted;
  std::shared_ptr<const saved_ps> resume;  // continue from a checkpoint (core/saved_state.hpp)
  double wire_bytes = 0;    // what a push or pull is charged on the link (0: its size)
  // A shard of a sharded PS (core/ps_group.hpp) holds `initial` = values
  // [offset, offset + initial.size()) of a model of model_size values.
  uint32_t shard = 0;
  uint32_t shards = 1;
  // With replicated shards: which copy of its shard this is (0: the first
  // primary) and how many replicas each shard has. A replica takes pushes and
  // the coordinator's sequence as its primary does, and reports them; it
  // traces nothing until it is promoted (replica_atom) to serve pulls.
  uint32_t copy = 0;
  uint32_t replicas = 0;
  bool serving = true;  // false: a copy made in a lost one's place (even as copy 0) serves only once promoted
  uint64_t offset = 0;
  uint64_t model_size = 0;  // 0: initial.size()
  // The model's last `buffers` values are buffers (BatchNorm's statistics):
  // no optimizer step, the pushed values combined by the weight rule (docs/buffers.md).
  uint64_t buffers = 0;
  // Per worker, the key its pushes and pulls on the bulk channel carry
  // (runtime/cluster/dataplane/data_plane.hpp); empty: none come that way.
  std::vector<uint64_t> bulk_keys;
  optimizer_config optimizer;  // docs/optimizers.md
  lr_schedule schedule;        // by samples taken in; constant (lr) unless it varies
  // A sparse model's tables (<syncpoint/table.hpp>, actors/ps_rows.hpp): this
  // shard keeps the rows of the keys row_shard gives it, made from `seed`'s
  // generators; each snapshot carries the rows of its `eval_keys` (by table:
  // the evaluator's test keys this shard keeps).
  std::vector<table_spec> tables;
  uint64_t seed = 1;
  bool rows_async = false;  // --sparse-sync async: rows stepped as each push comes, in any mode
  double memory_limit = 0;  // --ps-memory: bytes of rows this shard may hold (0: no limit)
  std::vector<std::vector<uint64_t>> eval_keys;
  // Resumed (`resume`): calls its argument with each chunk of the
  // checkpoint's rows in turn (the shard keeps its keys), throwing for one it cannot read.
  std::function<void(const std::function<void(const saved_rows&)>&)> resume_rows;
};

ps_actor spawn_parameter_server(caf::actor_system& sys, ps_config cfg);

/// The saved states of a sharded PS's shards (by shard, over `bounds`) as the
/// state of the whole model: one checkpoint, whatever the shard count.
saved_ps merge_shards(std::vector<saved_ps> parts, const std::vector<uint64_t>& bounds);

/// Shard k's part of `whole` for shards over `bounds`: any shard count takes
/// the model and optimizer state. Transfers in flight on a link model's links
/// resume only with the shards they were saved with, each on its own link;
/// throws std::invalid_argument otherwise.
saved_ps shard_of(const saved_ps& whole, const std::vector<uint64_t>& bounds, size_t k);

/// Replicated shards: every copy's saved state (copy r of shard k at
/// k * (R + 1) + r; none for a lost copy) as the whole model's, from the
/// copies that serve (`serving`, by shard), with each copy's link kept
/// (copy_links, in the order the copies come back in at a resume, where copy
/// 0 serves: the serving copy's first, then the others, saved copy 0 in the
/// serving copy's place; a lost copy's is its shard's serving copy's). Empty
/// `serving`: no replicas, the copies are the shards.
saved_ps merge_copies(std::vector<std::optional<saved_ps>> copies, const std::vector<uint64_t>& bounds,
                      const std::vector<uint32_t>& serving);

/// Every copy of every shard, copy r of shard k at k * (R + 1) + r (invalid:
/// lost); without replicas, the shards. The order a checkpoint keeps copies in.
std::vector<ps_actor> every_copy(const ps_group& ps);

/// Of `copies` (every_copy's order, invalid: lost) of `shards` shards, the
/// copy of shard k that serves as `saved` says (a checkpoint reads a sparse
/// model's rows from it), or a live one; invalid if none is.
ps_actor serving_copy(const std::vector<ps_actor>& copies, const saved_coordinator& saved, size_t k, size_t shards);

/// At a resume with `per` copies a shard: which saved copy of shard k the
/// resumed copy r takes its link, timers and reports from. Copy 0, which
/// serves on resume, the saved serving copy; the saved serving copy's slot,
/// saved copy 0; any other, itself. A copy lost at the checkpoint, or every
/// copy when the checkpoint had another R: its shard's serving copy.
uint32_t saved_copy_of(const saved_coordinator& saved, size_t k, size_t r, size_t per);

}  // namespace syncpoint
