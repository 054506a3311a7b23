// `syncpoint simulate`: how a protocol times a job of many workers, without
// computing anything. The job runs with the same actors on the virtual clock,
// with the "timing-only" model: an iteration is charged the named model's cost
// (or --iter-cost) times the worker's slowdown, a push or a pull the named
// model's bytes on the PS link, and no gradient is computed. Out come the
// timeline (waits, barriers, link use, as from train) and the coordinator's
// own cost per push in wall time.
//
//   syncpoint::job_config cfg;
//   cfg.protocol = "ssp"; cfg.workers = 1024; cfg.straggler = "3:x4";
//   auto s = syncpoint::simulate(cfg, /*iterations=*/100);
//   std::printf("%.1f s simulated in %.2f s\n", s.run.summary.run_time_s, s.wall_s);
#pragma once

#include <syncpoint/train.hpp>

namespace syncpoint {

struct simulation {
  run_result run;                 // as train's; its model is "timing-only"
  std::string as_model;           // the model whose cost and size were charged
  double iter_cost_ms = 0;        // per iteration at the job's batch
  std::string iter_cost_source;   // given, model table, parameter formula
  double wire_bytes = 0;          // per push and per pull
  double wall_s = 0;              // the whole simulation, on this machine
  double coordinator_us_per_push = 0;  // wall time the coordinator spent deciding, per push
  double clock_us_per_push = 0;        // ... and the virtual clock ordering and firing timers
};

/// Simulates `cfg` until the workers have pushed `iterations` batches each on
/// average (workers x iterations x batch samples), or cfg.max_time_s. What
/// concerns timing applies: protocol and options, workers, model (its cost and
/// size), batch, seed, straggler, iter_cost_ms, ps_bandwidth, latency_ms,
/// max_time_s, out_dir, progress; the rest is ignored. Throws config_error.
simulation simulate(job_config cfg, uint64_t iterations, progress_fn on_progress = {});

/// What simulate checks before it starts; throws config_error.
void check_simulation(const job_config& cfg, uint64_t iterations);

}  // namespace syncpoint
