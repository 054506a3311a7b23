// The parameter server's state (actors/parameter_server.cpp), shared with
// its checkpoint code (actors/ps_checkpoint.cpp). Not part of the API.
#pragma once

#include "actors/parameter_server.hpp"
#include "actors/row_store.hpp"
#include "core/link_model.hpp"

#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace syncpoint {

struct buffered_push {
  worker_id worker;
  uint64_t iter;
  uint64_t base_version;
};

struct pending_pull {
  worker_id worker;  // -1: not a member's (a job without members)
  caf::typed_response_promise<weights> reply;
  uint64_t charged = 0;  // a fragment's pull: the values the link charges (0: all it carries)
  std::vector<row_block> asked;  // a sparse model's pull: the keys of each table whose rows it gets
};

// A transfer on the link: a push on its way in, or weights on their way out.
// Data rather than a closure, so that a checkpoint can save it.
struct transit {
  worker_id worker = -1;
  bool is_push = false;
  bool via_bulk = false;  // from this process's bulk gateway: the lead asks the coordinator itself
  gradient_push push;
  caf::typed_response_promise<proceed> push_reply;
  weights out;
  caf::typed_response_promise<weights> pull_reply;
  uint64_t charged = 0;  // a pull's values as the link charges them (0: all of `out`)
};

struct ps_state {
  ps_config cfg;
  bool serving = true;  // the shard's primary (a replica: once promoted); only it traces
  // The weights. Pulls and snapshots share this buffer (no copy); an update
  // writes in place when nobody else holds it, else into a spare one.
  std::shared_ptr<std::vector<float>> w;
  size_t trained = 0;             // w[0, trained) are parameters, the rest the model's buffers
  std::vector<std::shared_ptr<std::vector<float>>> spares;
  std::vector<float> velocity;    // sgd, nesterov: the velocity; adam, adamw: the first moment
  std::vector<float> second;      // adam, adamw: the second moment
  double steps = 0;               // adam, adamw: updates as the bias correction counts them
  uint64_t samples_applied = 0;   // samples of every update so far: where the schedule is
  double lr = 0;                  // the rate of the last update
  /// The schedule's rate at samples_applied (a constant one: cfg.lr).
  double scheduled_lr() const { return cfg.schedule.varies() ? cfg.schedule.at(samples_applied) : cfg.lr; }
  double lr_traced = -1;          // ... and the last one the trace has (the lead's)
  uint32_t ramp_steps = 0;        // momentum rises from 0 to cfg.momentum over this many updates
  uint32_t ramp_done = 0;
  // A fragment's update (<syncpoint/local_work.hpp>): the ranges of this
  // slice the pass steps (empty: all of it), set around each update; and the
  // part of the model a buffered round's pushes carried, in the model's own
  // positions (empty: none yet), which its step covers.
  std::vector<uint64_t> only;
  std::vector<uint64_t> round_ranges;
  std::vector<float> round_step;  // gated, adjusted rule: the steps applied since the last publish
  bool round_open = false;        // ... and whether there were any
  double mean_staleness = -1;     // running mean of pushes' staleness (-1: none yet)
  // Buffered mode, adjusted rule (docs/momentum.md): the running mean of the
  // staleness in rounds of the pushes commits took in (0 while every commit is a
  // whole round of fresh pushes, as in BSP), and the samples taken in by each
  // recent version, to measure a push's staleness in rounds of samples.
  double round_staleness = 0;
  std::deque<std::pair<uint64_t, uint64_t>> samples_at_version;  // (version, samples), by version
  std::vector<float> buffer;      // sum of buffered gradients, each times its weight,
  float buffer_scale = 1;         // ... all of it times buffer_scale (lazily applied)
  float_slice held;               // ... but for the latest push, held apart: the commit adds it in
  float held_weight = 0;          //     its own pass, a later push folds it in (round_sum)
  double buffer_weight = 0;       // sum of the batches
  double buffer_taken = 0;        // sum of the weights (the batches, less for stale pushes)
  double buffer_share = 0;        // sum of the pushes' shares of a round when they came
  std::vector<buffered_push> buffered;
  std::vector<float> worker_weight;
  uint64_t version = 0;
  ps_mode mode = ps_mode::immediate;
  shared_floats visible;              // gated mode: the last published weights, all pulls see
  uint64_t visible_version = 0;
  coordinator_actor coordinator;
  std::vector<caf::actor_addr> members;  // by worker id; empty: anyone may push and pull
  std::unordered_map<caf::actor_addr, worker_id> member_ids;  // the inverse: a pull's sender in O(1)
  std::multimap<uint64_t, pending_pull> waiting_pulls;  // by the version they wait for
  // A shard of several, attached to a coordinator (sequenced): a push is all
  // shards' or none's. Each slice waits here until the coordinator's sequence
  // says apply (every shard has its slice) or drop (one refused its slice).
  std::map<std::pair<worker_id, uint64_t>, gradient_push> staged;
  // ... and a pull gets the version the worker was released to, on every
  // shard alike: the sequence's serve op holds it here until the pull comes,
  std::unordered_map<worker_id, weights> to_serve;
  // ... or, when the pull came first and found that version current, notes it
  // so that the serve op has nothing left to hold.
  std::unordered_map<worker_id, uint64_t> served_early;
  // A sparse model's tables (actors/ps_rows.hpp): this shard's rows of each,
  std::vector<row_store> tables;
  // ... and in buffered mode the round's row gradients by table, summed as
  // `buffer` and `held` are (a key none of the round's pushes carried: zeros).
  struct row_round {
    std::unordered_map<uint64_t, std::vector<float>> buffer, held;
  };
  std::vector<row_round> row_rounds;
  link_model link;
  std::map<uint64_t, transit> in_transit;                // by transfer id
  uint64_t next_transfer = 0;
  static inline const char* name = "parameter_server";
};

using ps_ptr = ps_actor::stateful_pointer<ps_state>;

/// Shard 0 (or the only PS), each of its copies: it reports pushes with their replies.
inline bool is_lead(const ps_state& st) {
  return st.cfg.shard == 0;
}

/// A shard of several with a coordinator: pushes wait for the coordinator's
/// sequence (actors/ps_sequence.cpp). One PS, or a shard on its own, takes a
/// push in when it arrives, as a push to one PS is all or nothing already.
inline bool sequenced(const ps_state& st) {
  return (st.cfg.shards > 1 || st.cfg.replicas > 0) && st.coordinator;
}

/// The current weights, shared (copy-free) with whoever reads them.
inline shared_floats published(const ps_state& st) {
  return shared_floats(std::shared_ptr<const std::vector<float>>(st.w));
}

/// The version a pull gets now: the current one, or in gated mode the published one.
inline uint64_t pullable_version(const ps_state& st) {
  return st.mode == ps_mode::gated ? st.visible_version : st.version;
}

// -- the parameter server's steps, shared by its files -------------------------------

/// A trace event, if the job traces.
void trace(ps_ptr self, trace_event ev);

/// The weights a pull gets now (pullable_version's).
weights pullable_weights(const ps_state& st);

/// Sends `out` to the pull `p` over the link (at once without a link model).
void send_weights(ps_ptr self, pending_pull p, weights out);

/// Answers the held pulls whose version exists now.
void answer_pulls(ps_ptr self);

/// Adjusted rule: notes the samples taken in by the version just made, for
/// the staleness of pushes computed on it (the last few rounds' are kept).
void remember_samples(ps_state& st);

/// Takes a checked push into the model: applied (a new version), or buffered for the round.
void take_in(ps_ptr self, gradient_push& g);

/// Sequenced: the coordinator's ops, in its order (actors/ps_sequence.cpp).
void run_sequence(ps_ptr self, std::vector<shard_op>& ops);

/// Sequenced: a pull of worker `w` (>= 0) for the version it was released to
/// (`charged`: the values its fragment covers, which the link charges; 0: all).
caf::result<weights> take_sequenced_pull(ps_ptr self, worker_id w, uint64_t version, uint64_t charged = 0,
                                         std::vector<row_block> asked = {});

/// Sequenced: answers the held pulls of versions that exist now, each at
/// exactly its version; false if one was skipped (the sequence is broken).
void answer_sequenced_pulls(ps_ptr self);

/// A resumed worker `w` (-1: not a member) asks again for the reply to its
/// push `iter`: it takes over the push on the link, or the coordinator's
/// held place (the request is delegated there).
caf::result<proceed> resume_push(ps_ptr self, worker_id w, uint64_t iter);

/// ... and for the weights of its pull: on the link, or waiting for its version.
caf::result<weights> resume_pull(ps_ptr self, worker_id w);

/// What this PS is called in errors: "the parameter server", or its shard.
std::string who(const ps_state& st);

// -- what the coordinator tells it, and how it starts (actors/ps_commands.cpp) ------------

/// A new PS's state from its configuration (a resumed one from its checkpoint).
void start_state(ps_state& st, ps_config cfg);

/// A resumed shard on a node takes its checkpoint's rows from the head, chunk by chunk, before
/// the job's workers start (a shard in the head's process reads the file itself: resume_rows).
/// Returns the rows it holds now.
caf::result<uint64_t> take_resumed_rows(ps_state& st, const saved_rows& chunk);

/// The job's coordinator and its workers by id (a vacant id has no handle yet).
void attach(ps_state& st, coordinator_actor coordinator, const std::vector<worker_actor>& workers);

/// Changes the mode: the round in progress is closed and buffered pushes committed first.
void change_mode(ps_ptr self, ps_mode m);

/// The run is stopping: a worker waiting for a version that will never come gets the
/// current weights, pushes once more and is told to stop.
void release_waiting_pulls(ps_ptr self);

/// The momentum from now on (`clear`: the velocity restarts at 0), ramped over `ramp_steps`.
void set_momentum(ps_state& st, double mu, bool clear, uint32_t ramp_steps);

/// The weights of the current version, to the evaluator.
void send_snapshot(ps_ptr self, const evaluator_actor& evaluator, uint64_t samples, bool final, uint64_t id);

/// Gated mode: pulls from now on see the current weights.
void publish(ps_ptr self);

/// The lead records the learning rate when the schedule has moved it by 1 % of its base, or
/// halved or doubled it, since the last record (docs/optimizers.md): a few hundred events at
/// most, which the report draws.
void trace_rate(ps_ptr self);

/// Applies the buffered pushes as one step. A coordinator's commit always makes a new version,
/// even from an empty buffer, because the coordinator counts its commits to know which version
/// to release workers to; a flush (end of run, mode change) makes one only if something was buffered.
void commit(ps_ptr self, bool new_version_even_if_empty);

/// The state a checkpoint keeps (without the promises of held requests).
saved_ps save(const ps_state& st);

/// Back to `s` (the configuration stays the new run's); held pulls and
/// transfers wait for their workers to ask again (resume_atom).
void restore(ps_state& st, const saved_ps& s);

}  // namespace syncpoint
