// The pieces both job runners assemble: the one-process runner (job.cpp) and
// the cluster's head (runtime/cluster/). The PS side of a job (tracer, PS,
// coordinator, evaluator) lives in one actor system; workers may live in any.
#pragma once

#include "actors/parameter_server.hpp"
#include "actors/worker.hpp"
#include <syncpoint/dataset.hpp>
#include "core/interfaces.hpp"
#include "core/saved_state.hpp"
#include "core/ps_group.hpp"
#include "runtime/job/job_plan.hpp"
#include <syncpoint/train.hpp>

#include <memory>

namespace syncpoint {

/// The data set `cfg` names, from cfg.data_dir (Fashion-MNIST) or generated
/// (synthetic), truncated to the limits. Every node that loads it with the same
/// cfg gets the same examples. Throws config_error naming what is wrong.
train_test load_job_data(const job_config& cfg);

/// Names the data set load_job_data(cfg) returns: equal keys, equal data (a cache key).
std::string data_key(const job_config& cfg);

/// The actors that stay with the PS.
/// --fail-shard's copies, in order: {shard, copy}, copy -1 for the shard's
/// primary at that point. Throws config_error naming what is wrong.
std::vector<std::pair<int, int>> fail_copies(const job_config& cfg);

struct job_core {
  tracer_actor tracer;
  ps_group ps;  // plan.shards() shards
  coordinator_actor coordinator;
  evaluator_actor evaluator;
};

struct checkpoint_state;  // core/saved_state.hpp

struct core_options {
  driver_actor driver;              // receives progress (if reported) and the outcome
  std::vector<job_observer_actor> observers;  // a program's own actors that follow the run
  time_point origin;                // time 0 of the run
  caf::duration request_timeout = caf::infinite;
  bool progress = false;            // coordinator prints progress on stderr
  bool report_progress = false;     // ... or sends it to the driver
  bool report_events = false;       // the driver gets every evaluation and phase change too
  progress_fn on_progress;          // ... or calls this instead of printing
  bool detached_evaluator = false;  // real clock: evaluate on a thread of its own
  const checkpoint_state* resume = nullptr;  // continue from a checkpoint (the workers' parts: worker_for)
  // Real clock: the coordinator takes checkpoints every cfg.checkpoint_every_s
  // and hands them here (the virtual clock's runner takes its own).
  checkpoint_opener on_checkpoint;
  // --ps-rereplicate: who makes a lost shard copy again (spawn_job_core: one
  // in this process, ended with the run; a cluster's runner places it on a node).
  copy_placer_actor placer;
  bool own_placer = false;
};

/// A sparse model's tables on every shard of `shards`: their specs (checked
/// by check_tables), the job's seed, and the keys of `test` each shard keeps
/// (its snapshots carry their rows to the evaluator), from the job's model
/// `m`. Nothing for a dense model.
void add_tables(std::vector<ps_config>& shards, const job_plan& plan, const dataset& test, model& m);

/// One shard's part of that: `tables`, with the job's seed, --sparse-sync
/// and --ps-memory, and the test keys it keeps (a shard spawned on a node).
void set_tables(ps_config& shard, const job_plan& plan, std::vector<table_spec> tables,
                std::vector<std::vector<uint64_t>> eval_keys);

/// config_error for a table spec that cannot work, or for unbounded tables
/// whose declared keys (table_spec::expected_keys) would pass --ps-memory.
void check_tables(const job_plan& plan, const std::vector<table_spec>& tables);

/// Spawns tracer, PS (the plan's shards with the model's initial weights),
/// coordinator and evaluator of `plan`, all in `sys`.
/// Start the run with (start_atom, workers, evaluator) to the coordinator.
/// Throws config_error, before spawning anything, for a checkpoint the shards
/// cannot take. Shards elsewhere (a cluster's nodes) take the two steps below.
job_core spawn_job_core(caf::actor_system& sys, const job_plan& plan, std::shared_ptr<const dataset> test,
                        const core_options& opts);

/// The first step: the tracer, spawned, and each shard's config, not yet.
struct ps_parts {
  tracer_actor tracer;
  std::vector<ps_config> shards;  // over plan.bounds
};
ps_parts prepare_ps(caf::actor_system& sys, const job_plan& plan, const core_options& opts);

/// The second step, once the shards run (anywhere): coordinator and evaluator.
job_core spawn_job_control(caf::actor_system& sys, const job_plan& plan, std::shared_ptr<const dataset> test,
                           const core_options& opts, tracer_actor tracer, ps_group ps);

/// Shard k of `plan`'s PS, holding `slice` (resumed from `resume` if given); a
/// node hosting the shard builds the same config from the plan.
ps_config shard_config(const job_plan& plan, size_t k, std::vector<float> slice, std::shared_ptr<const saved_ps> resume,
                       tracer_actor tracer, time_point origin);

/// Worker `id` of `plan`, on `train` (the full training set: it takes its own shard).
worker_config worker_for(const job_plan& plan, int id, double iter_cost_ms, std::shared_ptr<const dataset> train,
                         ps_group ps, tracer_actor tracer, time_point origin, caf::duration request_timeout,
                         const checkpoint_state* resume = nullptr);

/// Scheduler threads for `workers` workers on this machine: one each, up to its cores.
size_t scheduler_threads(int workers);

/// The result of a finished run (its summary from the trace) from the coordinator's outcome.
run_result make_result(const job_config& cfg, double iter_cost_ms, run_outcome outcome);

}  // namespace syncpoint
