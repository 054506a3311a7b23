#include "runtime/studies/simulate.hpp"

#include "runtime/records/run_files.hpp"
#include <syncpoint/model.hpp>

#include <chrono>
#include "models/reference_cost.hpp"

namespace syncpoint {

void check_simulation(const job_config& cfg, uint64_t iterations) {
  if (iterations < 1 || static_cast<double>(iterations) * cfg.batch > 1e6)
    throw config_error("--iterations must be at least 1, and --iterations x --batch at most 1e6");
  if (cfg.clock != clock_kind::virtual_time)
    throw config_error("simulate runs on the virtual clock only (a real-clock run computes: use train)");
  if (cfg.internals.measure_iter_cost)
    throw config_error("simulate charges a given or reference cost: --iter-cost measure is for train");
  if (cfg.model == "timing-only")
    throw config_error("simulate --model names the model to charge for (mlp, cnn, ...), not timing-only");
  validate(cfg);  // protocol, options, workers, straggler, link, model name
}

simulation simulate(job_config cfg, uint64_t iterations, progress_fn on_progress) {
  check_simulation(cfg, iterations);
  simulation s;
  s.as_model = cfg.model;
  s.wire_bytes = static_cast<double>(make_model(cfg.model)->size() * sizeof(float));
  s.iter_cost_source = "given";
  s.iter_cost_ms = cfg.iter_cost_ms > 0 ? cfg.iter_cost_ms
                                        : reference_gradient_ms(cfg.model, cfg.batch, &s.iter_cost_source);
  cfg.model = "timing-only";
  cfg.iter_cost_ms = s.iter_cost_ms;
  cfg.internals.wire_bytes = s.wire_bytes;
  cfg.dataset = "blank";
  cfg.train_limit = cfg.workers;  // one example each: an epoch is one sample per worker
  cfg.test_limit = 1;
  cfg.epochs = static_cast<double>(iterations) * cfg.batch;
  cfg.eval_every = 0;
  cfg.target_accuracy = 0;
  cfg.stop_at_target = false;
  cfg.internals.fail_worker = -1;
  cfg.checkpoint_every_s = 0;
  cfg.resume_dir.clear();
  auto out_dir = cfg.out_dir;  // written below, with the cost's true source
  cfg.out_dir.clear();

  auto t0 = std::chrono::steady_clock::now();
  s.run = train(cfg, std::move(on_progress));
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.run.summary.iter_cost_source = s.iter_cost_source;
  if (!out_dir.empty())
    write_run(out_dir, s.run);
  if (s.run.profile.coordinator_pushes > 0) {
    s.coordinator_us_per_push = s.run.profile.coordinator_busy_s * 1e6 / static_cast<double>(s.run.profile.coordinator_pushes);
    s.clock_us_per_push = s.run.profile.clock_busy_s * 1e6 / static_cast<double>(s.run.profile.coordinator_pushes);
  }
  return s;
}

}  // namespace syncpoint
