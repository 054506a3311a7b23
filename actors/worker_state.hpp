// The worker's state (actors/worker.cpp), shared with its step
// (actors/worker_step.cpp) and its messages to the PS shards
// (actors/worker_exchange.cpp). Not part of the API.
#pragma once

#include "actors/worker.hpp"
#include "actors/worker_pipeline.hpp"
#include "core/local_progress.hpp"
#include <syncpoint/worker_loop.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint {

struct worker_state {
  worker_config cfg;
  std::unique_ptr<model> m;
  std::unique_ptr<worker_loop> loop;    // what computes each gradient (the job's loop)
  int batch = 0;
  uint64_t iter = 0;              // gradients pushed
  uint64_t version = 0;           // version of the loaded weights
  uint64_t grad_version = 0;      // version the waiting gradient was computed on
  std::vector<float> grad;        // the gradient being computed or waiting to be pushed
  std::vector<float> residual;    // --compress: what compression left out so far (error feedback; empty: none yet)
  double push_bytes = 0;          // the bytes of the push in flight (its trace event's value)
  double pull_bytes = 0;          // ... and of the pull
  float loss = 0;
  int64_t samples = 0;            // ... what it averages
  std::string refused;            // why the PS refused the last push ("": it did not)
  nanos compute_start = 0;
  nanos push_sent = 0;
  nanos ready_since = 0;          // when the waiting gradient was done
  nanos pull_start = 0;
  nanos compute_due = 0;          // when the charged compute time ends
  uint64_t pull_min_version = 0;
  int rejected_in_a_row = 0;
  uint64_t push_seq = 0;          // pushes sent: a reply to an older one is void
  uint64_t pull_seq = 0;          // ... and pulls
  size_t pull_left = 0;           // shards whose slice of the pulled version has not come
  std::vector<bool> slice_in;     // ... by shard, whether it has
  std::vector<caf::actor_addr> pull_from;  // ... by shard, the copy asked (a replica asked again once promoted)
  // The lead shard's copies the push in flight went to: each relays the
  // coordinator's answer. Once all are lost, the serving copy is asked again.
  std::vector<caf::actor_addr> push_relays;
  caf::strong_actor_ptr coordinator;  // who started it: only it says a shard's replica serves now
  // Copies made in lost ones' places (--ps-rereplicate): each as the
  // coordinator named it, by (shard, copy), so that news of one twice changes
  // nothing; and the news of copies made or lost told before the start, by
  // whom, taken in at the start in the order told (a worker that joins while a
  // copy is lost starts with a group that still names it).
  std::map<std::pair<uint32_t, uint32_t>, caf::actor> added_copies;
  struct copy_news {
    caf::strong_actor_ptr from;
    uint32_t shard, copy;
    caf::actor handle;  // the copy made, or (lost) the one that serves now
    std::string bulk;
    bool lost = false;  // a copy lost, not made
  };
  std::vector<copy_news> copies_before_start;
  // reach_copy's proxies: they go with the worker (however it ends)
  std::shared_ptr<std::vector<caf::actor>> own_proxies = std::make_shared<std::vector<caf::actor>>();
  uint64_t pull_version = 0;      // ... the version of those that came (UINT64_MAX: none yet)
  std::shared_ptr<std::vector<float>> pulled;  // where the slices land (a sharded PS)
  std::shared_ptr<std::vector<float>> spare;   // ... and the other buffer, while the model holds one
  int outstanding = 0;            // requests sent and not answered (at most one: push or pull)
  nanos asked_at = 0;             // ... since when (the watchdog's reference)
  const char* asked_for = "";     // ... and what: "push" or "pull"
  // A sparse model (model::tables(), actors/worker_rows.cpp): each table's width,
  std::vector<uint32_t> widths;
  std::vector<std::vector<row_block>> rows_asked;  // ... the next step's keys asked of each shard
  std::vector<row_block> rows_in;                  // ... the pull's rows by table, as its slices bring them
  bool rows_loaded = false;                        // ... the model holds the rows of the next step's keys,
  std::vector<row_block> rows_held;                // ... these (a checkpoint saves them: the PS's have moved on)
  std::vector<row_block> row_grads;                // ... and the computed gradient's, pushed with it
  worker_pipeline pipe;
  bool started = false;           // the coordinator's start came
  nanos born = 0;                 // spawned (a worker that joins a running job waits from then)
  std::optional<proceed> reply;   // a reply not acted on yet
  local_progress local;           // its local work, and where it stands (actors/worker_local.cpp)
  // A tracer in another process on the real clock gets the events of a round
  // as one message (at the round's compute, or within 20 ms of an event): one
  // message crossing processes per round instead of five.
  bool batch_trace = false;
  std::vector<trace_event> held_events;
  bool send_due = false;          // ... a timer to send them is set
  static inline const char* name = "worker";
};

using worker_ptr = worker_actor::stateful_pointer<worker_state>;

// actors/worker.cpp: the trace, the run clock and the watchdog's bookkeeping.
void trace(worker_ptr self, const char* kind, nanos t0, nanos t1, double value = 0, const std::string& note = {});
void send_held_events(worker_ptr self);  // the events batch_trace holds, now
void leave(worker_ptr self, caf::error reason = {});  // quits, its held events sent first
nanos now(worker_ptr self);
void asked(worker_ptr self, const char* what);  // a request went out (the watchdog's clock starts)
void answered(worker_ptr self);                 // ... and is over

// actors/worker_step.cpp: one step, top to bottom, driven by the pipeline's transitions.
void advance(worker_ptr self);  // moves the pipeline on: act on an answer, push, or compute
void computed(worker_ptr self);  // the charged compute time is over
void push_accepted(worker_ptr self, const proceed& p);  // the lead shard's answer: the coordinator's word
void push_refused(worker_ptr self, proceed p, const std::string& why);  // ... or the push dropped
void pulled(worker_ptr self, uint64_t version, shared_floats::pointer values);  // one version's weights are in

// actors/worker_local.cpp: local work between exchanges (<syncpoint/local_work.hpp>).
/// After a gradient is computed (and clipped): the inner step, and the sum of
/// the round's gradients; true when the round's steps are done and st.grad
/// holds what the worker pushes (compressed, if the job compresses).
bool take_local_step(worker_state& st);
/// The pulled model `values` (of the exchange `st.pushed_work` says) goes
/// into the worker's: adopted whole, or merged into the fragment it
/// exchanged; an outer push's anchor follows it.
void merge_pulled(worker_state& st, shared_floats::pointer values);
/// The ranges [begin, end) of the model that `work`'s fragment covers, in
/// pairs (empty: the whole model).
std::vector<uint64_t> fragment_ranges(const model& m, const local_work& work);

// actors/worker_compress.cpp: --compress with error feedback.
/// Adds the residual to st.grad, compresses each shard's slice of its
/// parameters in place (into what the PS receives) and keeps what was lost
/// as the next residual. BatchNorm statistics (the model's buffers) go as they are.
void compress_gradient(worker_state& st);
/// Compresses a sparse model's row gradients (st.row_grads) in place, a block a table, without feedback.
void compress_rows(worker_state& st);
/// The bytes `rows` take on the wire: 8 a key, and their values' encoding (4 a value without compression).
uint64_t row_wire_bytes(const worker_state& st, const std::vector<row_block>& rows);
/// The bytes shard `k`'s slice of the gradient takes on the wire (4 a value without compression).
uint64_t slice_bytes(const worker_state& st, size_t k);
/// The bytes shard `k`'s slice of a pull takes on the wire: the slice, or the
/// fragment the exchange in flight carries (as the link charges a pull).
uint64_t pulled_bytes(const worker_state& st, size_t k);
/// A fragment's exchange under `work`: the ranges of shard `k`'s slice it
/// carries, in the slice's own positions (empty: all of it; gradient_push::ranges).
std::vector<uint64_t> slice_ranges(const worker_state& st, size_t k, const local_work& work);

// actors/worker_rows.cpp: a sparse model's rows (model::tables()).
/// Before a pull: the keys the loop's next step reads, each table's made
/// distinct and split by the shard that keeps them, into st.rows_asked.
void ask_rows(worker_state& st);
/// The rows one pulled slice brought (the whole pull's, with one shard).
void rows_came(worker_state& st, std::vector<row_block>& rows);
/// The pull is whole: the model takes its rows.
void load_pulled_rows(worker_state& st);
/// After a step: its row gradients, for the push; false (the error in
/// `why`) when the step had no fresh rows (a protocol that computes without a pull).
/// `given`: the loop's own (step_result::row_gradients), else the model's.
bool keep_row_gradients(worker_state& st, std::string& why, std::optional<std::vector<row_block>> given = {});
/// Shard k's part of the row gradients (all of them with one shard).
std::vector<row_block> row_gradients_for(const worker_state& st, size_t k);
/// A checkpoint's part of the rows, and back (the model takes the rows it held).
void save_rows(const worker_state& st, saved_worker& s);
void restore_rows(worker_state& st, const saved_worker& s);

// actors/worker_exchange.cpp: the messages to the PS shards and their replies, read.
/// The gradient in hand, a slice to each shard; the lead's answer into push_accepted or push_refused.
void send_push(worker_ptr self);
/// One version >= min_version from every shard, into pulled() (`resumed`: a
/// checkpoint's pull, of which only the slices that had not come).
void send_pull(worker_ptr self, uint64_t min_version, bool resumed);
void ask_again(worker_ptr self);                     // resumed: the push or pull the checkpoint held
void copy_lost(worker_ptr self, size_t shard, size_t copy, ps_actor primary);  // a replicated shard's copy went
// ... and a new one took its place: the next pushes go to it too
void copy_added(worker_ptr self, uint32_t shard, uint32_t copy, caf::actor handle, const std::string& bulk);

}  // namespace syncpoint
