#include <syncpoint/train.hpp>

#include "runtime/checkpointing.hpp"
#include "runtime/job_parts.hpp"
#include "runtime/virtual_time.hpp"

#include <caf/scheduler/test_coordinator.hpp>

#include <malloc.h>
#include <thread>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

namespace syncpoint {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok)
    throw config_error(what);
}

// Median wall time of a few gradient computations: the virtual clock's
// per-iteration cost when --iter-cost is not given.
double measure_iter_cost_ms(model& m, const std::vector<float>& w, const dataset& train, int batch) {
  m.load(w.data());
  auto b = static_cast<int64_t>(std::min<int64_t>(batch, train.size));
  batch_view view = train.view(0, b);
  std::vector<float> grad(m.size());
  m.gradient(view, grad.data());  // warm-up
  std::vector<double> times;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    m.gradient(view, grad.data());
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

void validate(const job_config& cfg) {
  if (!cfg.out_dir.empty()) {  // find an unusable output directory before the run, not after
    std::error_code ec;
    std::filesystem::create_directories(cfg.out_dir, ec);
    if (ec || !std::filesystem::is_directory(cfg.out_dir))
      throw config_error("cannot create output directory '" + cfg.out_dir + "'" +
                         (ec ? ": " + ec.message() : std::string()));
  }
  try {
    make_protocol(cfg.protocol, protocol_options_for(cfg));
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  auto names = model_names();
  if (std::find(names.begin(), names.end(), cfg.model) == names.end()) {
    std::string known;
    for (auto& n : names)
      known += (known.empty() ? "" : ", ") + n;
    throw config_error("unknown model '" + cfg.model + "' (valid: " + known + ")");
  }
  require(cfg.workers >= 1 && cfg.workers <= 4096, "--workers must be in 1..4096");
  require(cfg.batch >= 1, "--batch must be >= 1");
  require(std::isfinite(cfg.lr) && cfg.lr > 0, "--lr must be a positive number");
  require(std::isfinite(cfg.momentum) && cfg.momentum >= 0 && cfg.momentum < 1,
          "--momentum must be in [0, 1)");
  require(cfg.momentum_rule == "adjusted" || cfg.momentum_rule == "plain",
          "--momentum-rule must be adjusted or plain, not '" + cfg.momentum_rule + "'");
  require(std::isfinite(cfg.weight_decay) && cfg.weight_decay >= 0, "--weight-decay must be >= 0");
  optimizer_kind optimizer{};
  try {
    optimizer = parse_optimizer(cfg.optimizer);
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  require(optimizer != optimizer_kind::nesterov || cfg.momentum > 0, "--optimizer nesterov needs --momentum > 0");
  require(std::isfinite(cfg.beta1) && cfg.beta1 >= 0 && cfg.beta1 < 1, "--beta1 must be in [0, 1)");
  require(std::isfinite(cfg.beta2) && cfg.beta2 >= 0 && cfg.beta2 < 1, "--beta2 must be in [0, 1)");
  require(std::isfinite(cfg.eps) && cfg.eps > 0, "--eps must be a positive number");
  require(cfg.lr_scaling == "none" || cfg.lr_scaling == "linear",
          "--lr-scaling must be none or linear, not '" + cfg.lr_scaling + "'");
  require(std::isfinite(cfg.lr_epochs) && cfg.lr_epochs >= 0, "--lr-epochs must be >= 0 (0: the run's --epochs)");
  require(std::isfinite(cfg.clip_norm) && cfg.clip_norm >= 0, "--clip-norm must be >= 0 (0: no clipping)");
  require(std::isfinite(cfg.epochs) && cfg.epochs >= 0, "--epochs must be >= 0");
  require(std::isfinite(cfg.max_time_s) && cfg.max_time_s >= 0 && cfg.max_time_s <= 1e9,
          "--max-time must be in [0, 1e9] seconds");
  require(cfg.target_accuracy >= 0 && cfg.target_accuracy <= 1, "--target-accuracy must be in [0, 1]");
  require(std::isfinite(cfg.eval_every) && cfg.eval_every >= 0, "--eval-every must be >= 0");
  require(std::isfinite(cfg.iter_cost_ms) && cfg.iter_cost_ms >= 0 && cfg.iter_cost_ms <= 1e9,
          "--iter-cost must be in [0, 1e9] ms");
  require(cfg.request_timeout_s > 0 && cfg.request_timeout_s <= 1e9,
          "--request-timeout must be in (0, 1e9] seconds");
  require(std::isfinite(cfg.epochs) && cfg.epochs <= 1e6, "--epochs must be <= 1e6");
  require(!(cfg.target_accuracy > 0 && cfg.eval_every == 0 && cfg.epochs == 0 && cfg.max_time_s == 0),
          "--target-accuracy as the only limit needs --eval-every > 0 (nothing would be evaluated "
          "before the end)");
  require(cfg.threads >= 0, "--threads must be >= 0");
  require(std::isfinite(cfg.ps_bandwidth) && cfg.ps_bandwidth >= 0, "--ps-bandwidth must be >= 0 bytes/s");
  require(cfg.ps_shards >= 0 && cfg.ps_shards <= 64, "--ps-shards must be in 1..64 (0: the default)");
  require(cfg.ps_placement == "head" || cfg.ps_placement == "nodes", "--ps-placement must be head or nodes");
  require(std::isfinite(cfg.latency_ms) && cfg.latency_ms >= 0 && cfg.latency_ms <= 1e9,
          "--latency must be in [0, 1e9] ms");
  require(std::isfinite(cfg.checkpoint_every_s) && cfg.checkpoint_every_s >= 0,
          "--checkpoint-every must be >= 0 seconds");
  require(cfg.checkpoint_every_s == 0 || !cfg.checkpoint_dir.empty(),
          "--checkpoint-every needs --checkpoint-dir DIR");
  require(cfg.checkpoint_keep >= 0, "--checkpoint-keep must be >= 0 (0: keep all)");
  require(cfg.fail_worker < cfg.workers && (cfg.fail_worker < 0 || cfg.fail_at_iter >= 1),
          "--fail-worker W@K needs 0 <= W < workers and K >= 1");
  try {
    straggler_plan::parse(cfg.straggler).check_workers(cfg.workers);
  } catch (const straggler_error& e) {
    throw config_error(std::string("--straggler: ") + e.what());
  }
}

namespace {

// Gradients and weights travel as fresh vectors of the model's size. Keep
// such blocks in the heap for reuse: glibc would otherwise mmap and unmap
// each one, paying a page fault per 4 KiB on every iteration. And one
// arena: a block made on one thread (the PS's weights) and freed on another
// (a worker's) goes back to its own thread's arena, so each thread's arena
// kept growing into fresh pages (docs/performance.md: 1 worker, 0.75x of a
// plain loop with an arena per thread, 0.88x with one). Once per process.
void tune_allocator() {
  static const bool tuned = [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_ARENA_MAX, 1);
    return true;
  }();
  (void) tuned;
}

struct job_data {
  std::shared_ptr<const dataset> train, test;
};

job_data load_data(const job_config& cfg) {
  auto data = load_job_data(cfg);
  job_data out{std::make_shared<const dataset>(std::move(data.train)),
               std::make_shared<const dataset>(std::move(data.test))};
  set_torch_threads(1);  // parallelism comes from workers, one core each
  return out;
}

// Where a run starts (afresh, or from a checkpoint) and what one iteration
// costs on the virtual clock.
struct run_start {
  std::optional<resume_point> resume;
  double iter_cost_ms = 0;
  std::string cost_source = "given";
  const checkpoint_state* from() const { return resume ? &resume->point.state : nullptr; }
};

run_start find_start(const job_config& cfg_in, const job_config& cfg, const dataset& train) {
  run_start s;
  if (cfg.checkpoint_every_s > 0)
    check_checkpointable(cfg);
  if (!cfg.resume_dir.empty())
    s.resume = load_resume_point(cfg_in, make_model(cfg.model)->size(), train.size);
  s.iter_cost_ms = cfg.iter_cost_ms;
  if (s.resume && s.iter_cost_ms == 0) {
    s.iter_cost_ms = s.resume->iter_cost_ms;
    s.cost_source = "checkpoint";
  } else if (cfg.clock == clock_kind::virtual_time && s.iter_cost_ms == 0) {
    if (cfg.measure_iter_cost) {
      auto m = make_model(cfg.model);
      s.iter_cost_ms = measure_iter_cost_ms(*m, m->initial_weights(cfg.seed), train, cfg.batch);
      s.cost_source = "measured";
      if (cfg.progress)
        std::fprintf(stderr,
                     "[%s] virtual clock: one iteration measured at %.4f ms; pass --iter-cost %.4f "
                     "to reproduce this run bit for bit\n",
                     cfg.protocol.c_str(), s.iter_cost_ms, s.iter_cost_ms);
    } else {
      s.iter_cost_ms = reference_gradient_ms(cfg.model, cfg.batch, &s.cost_source);
    }
  }
  return s;
}

}  // namespace

size_t scheduler_threads(int workers) {
  auto cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<size_t>(std::max(1, std::min(workers, cores)));
}

namespace {

void configure_system(caf::actor_system_config& sys_cfg, const job_config& cfg) {
  register_messages(sys_cfg);
  if (cfg.clock == clock_kind::virtual_time) {
    sys_cfg.set("scheduler.policy", caf::atom("testing"));
    return;
  }
  // A few coarse actors (a message is ~1 ms of work): one shared queue whose
  // idle threads wake at once beats work stealing, whose idle threads back
  // off into sleeps (docs/architecture.md has the numbers).
  sys_cfg.set("scheduler.policy", caf::atom("sharing"));
  // One thread per worker, up to the cores: a lone worker and its PS then
  // share a cache instead of passing the model between cores.
  sys_cfg.set("scheduler.max-threads",
              cfg.threads > 0 ? static_cast<size_t>(cfg.threads) : scheduler_threads(cfg.workers));
}

// A job's actors, spawned and started, and the run clock's origin.
struct started_job {
  job_actors actors;
  time_point origin;
};

started_job start_actors(caf::actor_system& sys, caf::scoped_actor& driver, const job_config& cfg,
                         const run_start& start, const job_data& data,
                         const std::function<std::string(checkpoint_state&)>& write_checkpoint,
                         const progress_fn& on_progress) {
  bool virtual_clock = cfg.clock == clock_kind::virtual_time;
  auto origin = sys.clock().now();
  const checkpoint_state* from = start.from();
  if (from && virtual_clock)
    set_virtual_time(sys, origin, from->time_ns);
  else if (from)  // the real clock goes on from the checkpoint's time
    origin -= std::chrono::nanoseconds(from->time_ns);
  auto timeout = virtual_clock ? caf::duration{caf::infinite}
                               : caf::duration{seconds(cfg.request_timeout_s)};
  core_options opts;
  opts.driver = caf::actor_cast<driver_actor>(driver.ptr());
  opts.origin = origin;
  opts.request_timeout = timeout;
  opts.progress = cfg.progress;
  if (cfg.progress)
    opts.on_progress = on_progress;
  opts.detached_evaluator = !virtual_clock;
  opts.resume = from;
  if (!virtual_clock && cfg.checkpoint_every_s > 0)
    opts.on_checkpoint = write_checkpoint;
  started_job job{{spawn_job_core(sys, cfg, data.train->size, data.test, opts), {}}, origin};
  auto& core = job.actors.core;
  auto& workers = job.actors.workers;
  for (int i = 0; i < cfg.workers; ++i)
    workers.push_back(spawn_worker(
      sys, worker_for(cfg, i, start.iter_cost_ms, data.train, core.ps, core.tracer, origin, timeout, from)));
  driver->monitor(core.coordinator);
  caf::anon_send(core.coordinator, start_atom::value, workers, core.evaluator);
  if (from && virtual_clock)
    restore_timers(sys, job.actors, origin, from->timers);
  return job;
}

// Virtual clock: checkpoints fall at the first quiescent point at or after
// each multiple of --checkpoint-every, so a resumed run takes the same ones.
struct checkpoint_schedule {
  int64_t every_ns;
  int64_t next_at;
  checkpoint_schedule(double every_s, int64_t from_ns)
    : every_ns(static_cast<int64_t>(std::llround(every_s * 1e9))), next_at(after(from_ns)) {}
  int64_t after(int64_t now) const { return every_ns > 0 ? (now / every_ns + 1) * every_ns : INT64_MAX; }
};

// Runs the job to its outcome: on the virtual clock, every message and timer
// (and its checkpoints) first. Throws when the run fails, after stopping its actors.
run_outcome run_to_end(caf::actor_system& sys, caf::scoped_actor& driver, const started_job& job,
                       const job_config& cfg, const run_start& start,
                       const std::function<std::string(checkpoint_state&)>& write_checkpoint,
                       const progress_fn& on_progress) {
  bool virtual_clock = cfg.clock == clock_kind::virtual_time;
  checkpoint_schedule schedule(cfg.checkpoint_every_s, start.from() ? start.from()->time_ns : 0);
  auto take_checkpoint = [&](int64_t now) {
    auto state = gather_checkpoint(sys, driver, job.actors, job.origin);
    if (!state)
      return;  // the run is ending
    schedule.next_at = schedule.after(now);
    auto line = write_checkpoint(*state);  // stamped with this `now`: virtual time stood still
    if (cfg.progress) {
      progress_report r{line};
      if (on_progress)
        on_progress(r);
      else
        std::fprintf(stderr, "%s\n", r.line.c_str());
    }
  };
  auto drain = [&] {  // virtual clock: run every message; when none is left, jump to the next timer
    if (!virtual_clock)
      return;
    virtual_timeline timeline{dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())};
    do {
      timeline.run();
      auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(sys.clock().now() - job.origin).count();
      if (now >= schedule.next_at)
        take_checkpoint(now);
    } while (timeline.fire_next());
  };
  std::string failure;
  try {
    drain();
  } catch (const std::exception& e) {  // a checkpoint that could not be taken or written
    failure = e.what();
    schedule.next_at = INT64_MAX;
  }
  run_outcome outcome;
  bool finished = false;
  auto limit = virtual_clock ? std::chrono::seconds(0)
                             : std::chrono::seconds(cfg.max_time_s > 0
                                                      ? static_cast<int64_t>(cfg.max_time_s * 2) + 600
                                                      : 7 * 24 * 3600);
  if (failure.empty())
    driver->receive(
      [&](done_atom, run_outcome& o) {
        outcome = std::move(o);
        finished = true;
      },
      [&](caf::down_msg& dm) { failure = "the coordinator stopped: " + sys.render(dm.reason); },
      caf::after(limit) >> [&] { failure = "no result within the time limit"; });
  if (finished)
    return outcome;
  // Stop every actor before the actor system (whose destructor waits for them) goes.
  auto& core = job.actors.core;
  for (auto& a : job.actors.workers)
    driver->send_exit(a, caf::exit_reason::user_shutdown);
  driver->send_exit(core.coordinator, caf::exit_reason::user_shutdown);
  for (auto& shard : core.ps.shards)
    driver->send_exit(shard, caf::exit_reason::user_shutdown);
  driver->send_exit(core.evaluator, caf::exit_reason::user_shutdown);
  driver->send_exit(core.tracer, caf::exit_reason::user_shutdown);
  drain();
  throw std::runtime_error("the run failed: " +
                           (failure.empty() ? std::string("it ended without a result") : failure));
}

run_result finish(const job_config& cfg, const run_start& start, run_outcome outcome) {
  auto result = make_result(cfg, start.iter_cost_ms, std::move(outcome));
  result.summary.iter_cost_source = cfg.clock == clock_kind::virtual_time ? start.cost_source : "";
  if (start.resume) {
    result.summary.resumed_from = start.resume->file;
    result.summary.resumed_at_s = to_seconds(start.resume->point.state.time_ns);
  }
  if (!cfg.out_dir.empty())
    write_run(cfg.out_dir, result);
  return result;
}

}  // namespace

run_result train(const job_config& cfg_in, progress_fn on_progress) {
  validate(cfg_in);
  tune_allocator();
  job_config cfg = with_limits(cfg_in);
  auto data = load_data(cfg);
  schedule_of(cfg, data.train->size);  // refuses a schedule the run's length cannot carry
  auto start = find_start(cfg_in, cfg, *data.train);
  auto write_checkpoint = checkpoint_writer(cfg, run_settings(cfg_in, start.iter_cost_ms, data.train->size));
  caf::actor_system_config sys_cfg;
  configure_system(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor driver{sys};
  auto job = start_actors(sys, driver, cfg, start, data, write_checkpoint, on_progress);
  auto outcome = run_to_end(sys, driver, job, cfg, start, write_checkpoint, on_progress);
  return finish(cfg, start, std::move(outcome));
}

run_result make_result(const job_config& cfg, double iter_cost_ms, run_outcome outcome) {
  run_result r;
  r.summary = summarize(cfg, iter_cost_ms, outcome.trace, outcome.losses);
  r.trace = std::move(outcome.trace);
  for (auto& l : outcome.losses)
    r.failures.push_back("worker " + std::to_string(l.worker) + " lost: " + l.reason);
  r.final_model = std::move(outcome.final_model);
  r.coordinator_busy_s = outcome.coordinator_busy_s;
  r.coordinator_pushes = outcome.coordinator_pushes;
  return r;
}

void write_run(const std::string& dir, const run_result& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw config_error("cannot create output directory '" + dir + "': " + ec.message());
  std::ofstream trace(dir + "/trace.jsonl", std::ios::binary);
  for (auto& ev : r.trace)
    trace << to_json(ev) << '\n';
  std::ofstream summary(dir + "/summary.json", std::ios::binary);
  summary << to_json(r.summary) << '\n';
  if (!trace || !summary)
    throw config_error("cannot write to output directory '" + dir + "'");
}

}  // namespace syncpoint
