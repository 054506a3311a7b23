// What each actor of a job hands over for a checkpoint, and is spawned from
// to resume (docs/cluster.md, "Checkpoints"). Plain data with `inspect`, so
// that it may cross nodes, and written by cereal through the same field list.
//
// A checkpoint is taken at a consistent cut: no message is in a mailbox.
// What is in flight then is only (1) delayed self-messages, saved as
// `saved_timer`s, and (2) requests waiting for their reply: a push (at the PS
// on the link, or held by the coordinator) and a pull (waiting for a version,
// or on the link). The waiting side saves what it holds without the promise;
// a resumed worker sends its request again as a `resume_atom` request, which
// takes the held place over.
#pragma once

#include "core/local_progress.hpp"
#include "core/messages.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint {

struct saved_worker {
  nanos compute_due = 0;        // real clock: when its compute in progress ends
  worker_id id = 0;
  uint64_t iter = 0;
  uint64_t version = 0;
  uint64_t grad_version = 0;
  int32_t batch = 0;
  uint64_t data_position = 0;   // examples drawn from its shard
  std::string rng_state;        // its sampler's engine after them (a check on the replay)
  std::vector<float> model;     // its copy of the model (WBSP trains it locally)
  std::vector<float> grad;      // the gradient computed or waiting
  float loss = 0;
  nanos compute_start = 0, push_sent = 0, ready_since = 0, pull_start = 0;
  int32_t rejected_in_a_row = 0;
  bool computing = false, ready = false, in_flight = false, pulling = false, started = false;
  uint64_t pull_min_version = 0;
  // A pull from K > 1 shards some of whose slices had come: which, what they
  // hold (in place in a whole model), and their version (one for all).
  std::vector<bool> slices_in;
  std::vector<float> pulled;
  uint64_t pulled_version = 0;
  bool has_reply = false;
  proceed reply;
  local_progress local;         // its local work and where it stands (core/local_progress.hpp)
  int64_t samples = 0;          // what its gradient (in hand) averages
  std::vector<float> residual;  // --compress: its error feedback (empty: none yet)
  double push_bytes = 0;        // the bytes of its push in flight
  double pull_bytes = 0;        // ... and of its pull
  // A sparse model (actors/worker_rows.cpp): the keys its pull asked of each
  // shard, the rows that had come, the rows its model holds (loaded: not yet
  // stepped on), and the row gradients of the gradient in hand.
  std::vector<std::vector<row_block>> rows_asked;
  std::vector<row_block> rows_in, rows_held, row_grads;
  bool rows_loaded = false;
};

struct saved_buffered_push {
  worker_id worker = 0;
  uint64_t iter = 0;
  uint64_t base_version = 0;
};

/// A pull the PS holds until its version exists.
struct saved_pull {
  uint64_t min_version = 0;
  worker_id worker = 0;
  uint64_t charged = 0;  // a fragment's pull: the values the link charges (0: all)
  std::vector<row_block> asked;  // a sparse model's pull: the keys whose rows it gets
};

/// A transfer on the PS's link: a push on its way in, or weights on their way out.
struct saved_transfer {
  uint64_t id = 0;
  worker_id worker = 0;
  bool is_push = false;
  gradient_push push;
  uint64_t version = 0;        // weights: their version
  std::vector<float> values;   // ... and values
  std::vector<row_block> rows; // ... and a sparse model's rows
};

/// A version a shard's table keeps readable (a held release, gated mode's
/// published one), with the rows changed since as they were then.
struct saved_pin {
  uint64_t version = 0;
  std::vector<uint64_t> keys;
  std::vector<float> values;  // width floats a key
};

/// A shard's table beside its rows (the rows go in chunks: saved_rows).
struct saved_table {
  uint32_t table = 0;
  uint32_t shard = 0, shards = 1;  // whose: shard of shards
  uint64_t evictions = 0, hits = 0, misses = 0;
  std::vector<saved_pin> pins;
  row_block round;  // buffered mode: the round's row sums (a held push's folded in, as the dense buffer is saved)
};

/// A chunk of one shard's table, in key order: rows with their optimizer
/// state, then the keys sighted but not admitted yet. A checkpoint streams a
/// sparse model's tables chunk after chunk, so that no second copy of a
/// table is ever held (docs/sparse.md, "Checkpoints").
struct saved_rows {
  uint32_t table = 0;
  uint32_t tables = 0;            // how many the shard has (0: a dense model's shard)
  bool last = true;               // the table's last chunk on this shard
  uint64_t next = 0;              // ... else where the next one starts
  std::vector<uint64_t> keys;
  std::vector<float> values;      // width floats a key
  std::vector<float> first, second;  // adam: both moments; adagrad: second (the sum of squares)
  std::vector<uint64_t> steps, last_touch, touches;  // a key each: adam's own step count; lru; lfu
  std::vector<uint64_t> sighted;  // admission: keys not admitted yet,
  std::vector<uint32_t> sightings;  // ... and how often each was seen
};

/// A shard's link and held pulls (a sharded PS's checkpoint keeps one per shard),
/// and the slices it holds of pushes other shards have not all reported.
struct saved_shard_link {
  double link_free_at = 0;
  std::vector<saved_transfer> in_transit;
  uint64_t next_transfer = 0;
  std::vector<saved_pull> waiting_pulls;
  std::vector<gradient_push> staged;
};

/// The whole model's PS state. Saved from K > 1 shards, the vectors are their
/// slices end to end, and each shard's link and held pulls are kept apart.
struct saved_ps {
  std::vector<float> w, velocity, round_step, buffer, worker_weight, visible;
  std::vector<float> second;      // adam, adamw: the second moment (velocity holds the first)
  double steps = 0;               // adam, adamw: the bias correction's step count
  uint64_t samples_applied = 0;   // where the learning-rate schedule is
  double lr_traced = -1;          // the last rate the trace has
  double momentum = 0;
  uint32_t ramp_steps = 0, ramp_done = 0;
  bool round_open = false;
  double mean_staleness = -1;
  float buffer_scale = 1;
  double buffer_weight = 0;
  double buffer_taken = 0;        // the buffer's weights (stale pushes weigh less: docs/momentum.md)
  double buffer_share = 0;        // ... and its pushes' shares of a round when they came
  double round_staleness = 0;     // buffered mode: the mean staleness in rounds of the pushes committed
  std::vector<uint64_t> samples_at_version;  // (version, samples taken in) pairs, end to end
  std::vector<saved_buffered_push> buffered;
  std::vector<uint64_t> round_ranges;  // what the round's pushes carried, in the model's positions
  uint64_t version = 0, visible_version = 0;
  uint8_t mode = 0;
  std::vector<saved_pull> waiting_pulls;
  double link_free_at = 0;
  std::vector<saved_transfer> in_transit;
  uint64_t next_transfer = 0;
  std::vector<gradient_push> staged;           // a shard of several: slices waiting for the others'
  std::vector<uint64_t> shard_bounds;          // K > 1: the shards' ranges (core/ps_group.hpp)
  std::vector<saved_shard_link> shard_links;   // ... and each one's link (the fields above: shard 0's)
  // With replicated shards (--ps-replicas R): every copy's own link, shard k's
  // at k * (R + 1) in the order its copies come back in (saved_copy_of: the
  // serving copy's first; a lost copy's is its shard's serving copy's);
  // a shard's part (shard_of) keeps its own R + 1. A replica's link differs
  // from its primary's: it carries the pushes, not the pulls.
  std::vector<saved_shard_link> copy_links;
  // A sparse model: each shard's tables beside their rows (all shards',
  // each tagged; a resumed shard takes the keys that are its own now).
  std::vector<saved_table> tables;
};

struct saved_coordinator_timer {
  uint64_t id = 0;
  bool is_release = false;
  worker_id worker = -1;
  bool pull = true;
  uint64_t tag = 0;
  nanos due = 0;
};

/// A push some shards of several had reported when the checkpoint was taken.
struct saved_partial_push {
  push_info info;
  uint32_t reports = 0;
  bool lead_in = false;  // the lead's report was in: the worker asks again for its reply
  std::vector<bool> in;  // who had reported it: by shard, or with replicas by copy (shard * (R + 1) + copy)
};

struct saved_coordinator {
  std::vector<bool> live, gone, waiting, held;  // held: waiting with a push to answer
  std::vector<bool> has_deferred;               // released, the release held back by the checkpoint
  std::vector<proceed> deferred;
  std::vector<uint64_t> clock, waiting_since, pending_release;
  std::vector<nanos> accepted;
  std::vector<uint32_t> batch;
  std::vector<saved_coordinator_timer> timers;
  uint64_t next_timer = 0, version = 0, published_version = 0, samples = 0, next_eval = 0, event = 0;
  uint8_t mode = 0;
  std::vector<local_work> work;  // per worker: the local work of its next release
  bool target_reached = false;
  double last_accuracy = -1, next_tick = 0.01;
  double max_time_s = 0;        // the cap its pending timer is for
  std::vector<worker_loss> losses;
  std::string protocol_state;   // the protocol's own (protocols/protocol_state.hpp)
  std::vector<saved_partial_push> partial;  // a sharded PS's pushes not all shards had reported
  uint64_t buffered = 0;        // ... and those in its round since the last commit
  uint64_t rejected = 0;        // pushes refused so far
  // With replicated shards: which copies were lost (by copy, as partial's
  // `in`) and which copy served each shard. A lost copy is saved as its
  // shard's serving copy, and comes back as one at a resume.
  std::vector<bool> copy_lost;
  std::vector<uint32_t> serving;
};

/// A delayed self-message: to whom (a worker id, or one of the roles below),
/// when (ns on the run clock), and which (its atom, with `id` if it has one).
struct saved_timer {
  static constexpr worker_id ps = -1;  // the PS, or its shard 0
  static constexpr worker_id coordinator = -2;
  static constexpr worker_id shard(size_t k) { return k == 0 ? ps : -2 - static_cast<worker_id>(k); }
  worker_id to = 0;
  nanos due = 0;
  caf::atom_value what = caf::atom("");
  bool has_id = false;
  uint64_t id = 0;
  uint32_t copy = 0;  // to a shard's role: which copy of it (--ps-replicas)
};

/// The run's state at a checkpoint: each actor's (above) and the timers
/// pending, at a cut where no message is in a mailbox. The runner writes it
/// (runtime/records/checkpoint_file.hpp); the actors only hand it over.
struct checkpoint_state {
  int64_t time_ns = 0;   // on the run's clock
  uint64_t samples = 0;
  std::vector<std::pair<std::string, std::string>> settings;  // the options that fix the run's course
  saved_coordinator coordinator;   // with the protocol's state
  saved_ps ps;                     // model, optimizer state, version
  std::vector<saved_worker> workers;  // by id (a worker gone before the checkpoint: its id only)
  std::vector<saved_timer> timers;    // in the order they fire
  std::vector<trace_event> trace;     // so far, evaluations included
  // Not in the payload: where a checkpoint read back has its tables' chunks
  // (runtime/records/checkpoint_file.hpp), which the resumed shards read.
  std::string rows_file;
  uint64_t rows_at = 0;
};

/// Where a checkpoint goes: its state, then a sparse model's rows chunk by
/// chunk (each shard's tables in turn), then commit. Nothing replaces an
/// older checkpoint before commit. A runner's writer opens one per checkpoint.
class checkpoint_sink {
 public:
  virtual ~checkpoint_sink() = default;
  virtual void add(const saved_rows& chunk) = 0;
  /// The checkpoint is whole: what the run reports of it. Throws when it cannot be written.
  virtual std::string commit() = 0;
};
using checkpoint_opener = std::function<std::unique_ptr<checkpoint_sink>(checkpoint_state&)>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_worker& x) {
  return f(caf::meta::type_name("saved_worker"), x.compute_due, x.id, x.iter, x.version, x.grad_version, x.batch,
           x.data_position, x.rng_state, float_block{x.model}, float_block{x.grad}, exact(x.loss), x.compute_start,
           x.push_sent, x.ready_since, x.pull_start, x.rejected_in_a_row, x.computing, x.ready, x.in_flight,
           x.pulling, x.started, x.pull_min_version, flag_block{x.slices_in}, float_block{x.pulled}, x.pulled_version,
           x.has_reply, x.reply, x.local, x.samples,
           float_block{x.residual}, exact(x.push_bytes), exact(x.pull_bytes), x.rows_asked, x.rows_in, x.rows_held,
           x.row_grads, x.rows_loaded);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_buffered_push& x) {
  return f(caf::meta::type_name("saved_buffered_push"), x.worker, x.iter, x.base_version);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_pull& x) {
  return f(caf::meta::type_name("saved_pull"), x.min_version, x.worker, x.charged, x.asked);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_transfer& x) {
  return f(caf::meta::type_name("saved_transfer"), x.id, x.worker, x.is_push, x.push, x.version,
           float_block{x.values}, x.rows);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_pin& x) {
  return f(caf::meta::type_name("saved_pin"), x.version, x.keys, float_block{x.values});
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_table& x) {
  return f(caf::meta::type_name("saved_table"), x.table, x.shard, x.shards, x.evictions, x.hits, x.misses, x.pins,
           x.round);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_rows& x) {
  return f(caf::meta::type_name("saved_rows"), x.table, x.tables, x.last, x.next, x.keys, float_block{x.values},
           float_block{x.first}, float_block{x.second}, x.steps, x.last_touch, x.touches, x.sighted, x.sightings);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_ps& x) {
  return f(caf::meta::type_name("saved_ps"), float_block{x.w}, float_block{x.velocity},
           float_block{x.round_step}, float_block{x.buffer}, float_block{x.worker_weight}, float_block{x.visible},
           exact(x.momentum), x.ramp_steps, x.ramp_done, x.round_open, exact(x.mean_staleness),
           exact(x.buffer_scale), exact(x.buffer_weight), x.buffered, x.version, x.visible_version, x.mode, x.waiting_pulls,
           exact(x.link_free_at), x.in_transit, x.next_transfer, x.shard_bounds, x.shard_links,
           float_block{x.second}, exact(x.steps), x.samples_applied, exact(x.lr_traced), x.staged,
           exact(x.buffer_taken), exact(x.round_staleness), x.samples_at_version, exact(x.buffer_share),
           x.round_ranges, x.copy_links, x.tables);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_shard_link& x) {
  return f(caf::meta::type_name("saved_shard_link"), exact(x.link_free_at), x.in_transit, x.next_transfer,
           x.waiting_pulls, x.staged);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_partial_push& x) {
  return f(caf::meta::type_name("saved_partial_push"), x.info, x.reports, x.lead_in, flag_block{x.in});
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_coordinator_timer& x) {
  return f(caf::meta::type_name("saved_coordinator_timer"), x.id, x.is_release, x.worker, x.pull, x.tag, x.due);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_coordinator& x) {
  return f(caf::meta::type_name("saved_coordinator"), flag_block{x.live}, flag_block{x.gone},
           flag_block{x.waiting}, flag_block{x.held}, flag_block{x.has_deferred},
           x.deferred, x.clock,
           x.waiting_since, x.pending_release, x.accepted, x.batch, x.timers, x.next_timer, x.version,
           x.published_version, x.samples, x.next_eval, x.event, x.mode, x.work,
           x.target_reached, exact(x.last_accuracy), exact(x.next_tick), exact(x.max_time_s), x.losses, x.protocol_state,
           x.partial, x.buffered, x.rejected, flag_block{x.copy_lost}, x.serving);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, saved_timer& x) {
  return f(caf::meta::type_name("saved_timer"), x.to, x.due, x.what, x.has_id, x.id, x.copy);
}

}  // namespace syncpoint
