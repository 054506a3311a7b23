// The job API (include/syncpoint/job.hpp): a job's steps, from its config to its
// result, on an actor system that may hold other actors and jobs. train()
// (job.cpp) is one job on a system of its own.
#include <syncpoint/job.hpp>

#include "core/messages.hpp"
#include "runtime/job/checkpointing.hpp"
#include "runtime/job/job_parts.hpp"
#include "runtime/job/virtual_time.hpp"
#include "runtime/records/run_files.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include "models/reference_cost.hpp"

namespace syncpoint {

namespace {

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

run_start find_start(const job_plan& plan, const dataset& train) {
  auto& cfg = plan.cfg;
  run_start s;
  if (takes_checkpoints(cfg))
    check_checkpointable(plan);
  if (!cfg.resume_dir.empty())
    s.resume = load_resume_point(plan);
  s.iter_cost_ms = cfg.iter_cost_ms;
  if (s.resume && s.iter_cost_ms == 0) {
    s.iter_cost_ms = s.resume->iter_cost_ms;
    s.cost_source = "checkpoint";
  } else if (cfg.clock == clock_kind::virtual_time && s.iter_cost_ms == 0) {
    if (cfg.internals.measure_iter_cost) {
      auto m = make_model(cfg.model, worker_input(plan, 0));
      s.iter_cost_ms = measure_iter_cost_ms(*m, m->initial_weights(cfg.seed), train, cfg.batch);
      s.cost_source = "measured";
      if (cfg.progress)
        std::fprintf(stderr,
                     "[%s] virtual clock: one iteration measured at %.4f ms; pass --iter-cost %.4f "
                     "to reproduce this run bit for bit\n",
                     cfg.protocol.c_str(), s.iter_cost_ms, s.iter_cost_ms);
    } else {
      s.iter_cost_ms = reference_gradient_ms(cfg.model, cfg.batch, &s.cost_source, plan.input);
    }
  }
  return s;
}

void configure_scheduler(caf::actor_system_config& sys_cfg, const job_config& cfg) {
  if (cfg.clock == clock_kind::virtual_time) {
    use_virtual_clock(sys_cfg);
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

// A job's actors, spawned, and the run clock's origin.
struct started_job {
  job_actors actors;
  time_point origin;
};

started_job spawn_actors(caf::actor_system& sys, caf::scoped_actor& driver, const job_plan& plan,
                         const run_start& start, const job_data& data,
                         const checkpoint_opener& write_checkpoint,
                         const job_options& options) {
  auto& cfg = plan.cfg;
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
    opts.on_progress = options.on_progress;
  opts.observers = options.observers;
  opts.detached_evaluator = !virtual_clock;
  opts.resume = from;
  if (!virtual_clock && !cfg.checkpoint_dir.empty())  // periodic, or asked for (checkpoint_request)
    opts.on_checkpoint = write_checkpoint;
  started_job job{{spawn_job_core(sys, plan, data.test, opts), {}}, origin};
  auto& core = job.actors.core;
  auto& workers = job.actors.workers;
  for (int i = 0; i < cfg.workers; ++i)
    workers.push_back(spawn_worker(
      sys, worker_for(plan, i, start.iter_cost_ms, data.train, core.ps, core.tracer, origin, timeout, from)));
  return job;
}

// Sends the start, and on the virtual clock puts a resumed run's timers back.
void start_actors(caf::actor_system& sys, caf::scoped_actor& driver, const started_job& job, const job_config& cfg,
                  const run_start& start) {
  auto& core = job.actors.core;
  driver->monitor(core.coordinator);
  caf::anon_send(core.coordinator, start_atom::value, job.actors.workers, core.evaluator);
  if (start.from() && cfg.clock == clock_kind::virtual_time)
    restore_timers(sys, job.actors, job.origin, start.from()->timers, start.from()->coordinator);
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

// Stops every actor of the job, before the actor system (whose destructor
// waits for them) goes.
void stop_every_actor(caf::scoped_actor& driver, const job_actors& actors) {
  for (auto& a : actors.workers)
    driver->send_exit(a, caf::exit_reason::user_shutdown);
  driver->send_exit(actors.core.coordinator, caf::exit_reason::user_shutdown);
  for (auto& shard : actors.core.ps.all_members())
    driver->send_exit(shard, caf::exit_reason::user_shutdown);
  driver->send_exit(actors.core.evaluator, caf::exit_reason::user_shutdown);
  driver->send_exit(actors.core.tracer, caf::exit_reason::user_shutdown);
}

// Asks the caller's stop_when, and tells the coordinator once.
struct stop_asker {
  caf::scoped_actor& driver;
  const started_job& job;
  const std::function<std::string()>& when;
  bool sent = false;

  bool asking() const { return when && !sent; }
  bool ask() {  // true when it stopped the run just now
    if (!asking())
      return false;
    auto why = when();
    if (why.empty())
      return false;
    driver->send(job.actors.core.coordinator, stop_request{why});
    sent = true;
    return true;
  }
};

// The coordinator's outcome, or none with `failure` said. The real clock waits
// until a deadline past the time cap, in slices of 100 ms while there is a
// stop_when to ask between them.
std::optional<run_outcome> await_outcome(caf::actor_system& sys, caf::scoped_actor& driver, const job_config& cfg,
                                         stop_asker& stop, std::string& failure) {
  bool virtual_clock = cfg.clock == clock_kind::virtual_time;
  auto limit = virtual_clock ? std::chrono::seconds(0)
                             : std::chrono::seconds(cfg.max_time_s > 0
                                                      ? static_cast<int64_t>(cfg.max_time_s * 2) + 600
                                                      : 7 * 24 * 3600);
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::optional<run_outcome> outcome;
  while (failure.empty() && !outcome) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto slice = stop.asking() ? std::min(left, std::chrono::milliseconds(100)) : left;
    bool timed_out = false;
    driver->receive(
      [&](done_atom, run_outcome& o) { outcome = std::move(o); },
      [&](caf::down_msg& dm) { failure = "the coordinator stopped: " + sys.render(dm.reason); },
      caf::after(std::max(slice, std::chrono::milliseconds(0))) >> [&] { timed_out = true; });
    if (timed_out && !stop.ask() && std::chrono::steady_clock::now() >= deadline)
      failure = "no result within the time limit";
  }
  return outcome;
}

// Runs the job to its outcome: on the virtual clock, every message and timer
// (and its checkpoints) first, adding the clock's own cost to `clock_busy_s`.
// Throws when the run fails, after stopping its actors.
run_outcome run_to_end(caf::actor_system& sys, caf::scoped_actor& driver, const started_job& job,
                       const job_config& cfg, const run_start& start,
                       const checkpoint_opener& write_checkpoint,
                       const progress_fn& on_progress, const std::function<std::string()>& stop_when,
                       double& clock_busy_s) {
  stop_asker stop{driver, job, stop_when};
  checkpoint_schedule schedule(cfg.checkpoint_every_s, start.from() ? start.from()->time_ns : 0);
  auto take_checkpoint = [&](int64_t now) {
    auto state = gather_checkpoint(sys, driver, job.actors, job.origin);
    if (!state)
      return;  // the run is ending
    schedule.next_at = schedule.after(now);
    auto out = write_checkpoint(*state);
    gather_rows(sys, driver, job.actors, state->coordinator, *out);  // a sparse model's tables, chunk by chunk
    auto line = out->commit();  // stamped with this `now`: virtual time stood still
    if (cfg.progress) {
      progress_report r{line};
      if (on_progress)
        on_progress(r);
      else
        std::fprintf(stderr, "%s\n", r.line.c_str());
    }
  };
  auto drain = [&] {  // virtual clock: run every message; when none is left, jump to the next timer
    if (cfg.clock != clock_kind::virtual_time)
      return;
    virtual_timeline timeline{sys};
    do {
      timeline.run();
      auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(sys.clock().now() - job.origin).count();
      if (now >= schedule.next_at)
        take_checkpoint(now);
    } while (stop.ask() || timeline.fire_next());
    clock_busy_s += std::chrono::duration<double>(timeline.cost()).count();
  };
  std::string failure;
  try {
    drain();
  } catch (const std::exception& e) {  // a checkpoint that could not be taken or written
    failure = e.what();
    schedule.next_at = INT64_MAX;
  }
  if (auto outcome = await_outcome(sys, driver, cfg, stop, failure))
    return std::move(*outcome);
  stop_every_actor(driver, job.actors);
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

// Systems that run a virtual-clock job: one timeline drives a whole system,
// so a second virtual job in it would take the first one's events.
std::mutex virtual_systems_mutex;
std::set<const caf::actor_system*> virtual_systems;

bool is_virtual(caf::actor_system& sys) {
  return on_virtual_clock(sys);
}

}  // namespace

void configure(caf::actor_system_config& sys_cfg, const job_config& cfg) {
  tune_allocator();  // before the system's threads start: they would take arenas of their own
  register_messages(sys_cfg);
  configure_scheduler(sys_cfg, cfg);
}

struct job::impl {
  caf::actor_system& sys;
  job_config cfg_in;
  job_plan plan;  // what cfg_in became: every step below takes it
  job_data data;
  run_start start;
  checkpoint_opener write_checkpoint;
  progress_fn on_progress;
  std::function<std::string()> stop_when;
  std::optional<caf::scoped_actor> driver;
  started_job actors;
  job_handles handles;
  bool started = false, waited = false, holds_timeline = false;

  impl(caf::actor_system& s, const job_config& c) : sys(s), cfg_in(c) {}
  ~impl() { release_timeline(); }
  void release_timeline() {
    if (holds_timeline) {
      std::lock_guard<std::mutex> lock(virtual_systems_mutex);
      virtual_systems.erase(&sys);
      holds_timeline = false;
    }
  }
};

job job::spawn(caf::actor_system& sys, const job_config& cfg_in, job_options opts) {
  validate(cfg_in);
  bool virtual_clock = cfg_in.clock == clock_kind::virtual_time;
  if (virtual_clock != is_virtual(sys))
    throw config_error(std::string("a ") + to_string(cfg_in.clock) + "-clock job needs an actor system set up for it: "
                       "call syncpoint::configure(sys_cfg, cfg) before making the system");
  auto p = std::make_unique<impl>(sys, cfg_in);
  if (virtual_clock) {
    std::lock_guard<std::mutex> lock(virtual_systems_mutex);
    if (!virtual_systems.insert(&sys).second)
      throw config_error("a virtual-clock job already runs in this actor system (one timeline drives it all): "
                         "give each virtual-clock job a system of its own");
    p->holds_timeline = true;
  }
  tune_allocator();
  p->data = load_data(cfg_in);
  auto input = input_of(*p->data.train);
  input.loss = cfg_in.loss;  // a loss file that cannot be read is refused here, before any actor
  auto m = make_model(cfg_in.model, input);
  plan_context ctx{p->data.train->size, m->size(), m->buffers(), 1, input, this_machine()};
  ctx.tensors = m->tensor_sizes().size();
  p->plan = make_plan(cfg_in, ctx);
  p->start = find_start(p->plan, *p->data.train);
  p->write_checkpoint = checkpoint_writer(p->plan, run_settings(p->plan, p->start.iter_cost_ms));
  p->on_progress = opts.on_progress;
  p->stop_when = opts.stop_when;
  p->driver.emplace(sys);
  p->actors = spawn_actors(sys, *p->driver, p->plan, p->start, p->data, p->write_checkpoint, opts);
  auto& core = p->actors.actors.core;
  p->handles = {core.coordinator, static_cast<int32_t>(p->actors.actors.workers.size()), core.ps.bounds};
  return job(std::move(p));
}

job::job(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
job::job(job&&) noexcept = default;

job& job::operator=(job&& other) noexcept {
  if (this != &other) {
    release();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

job::~job() { release(); }

job::impl& job::self() const {
  if (!impl_)
    throw std::logic_error("syncpoint::job: this job was moved from");
  return *impl_;
}

void job::release() noexcept {
  if (!impl_ || impl_->waited) {
    impl_.reset();
    return;
  }
  if (!impl_->started) {  // never ran: its actors go
    stop_every_actor(*impl_->driver, impl_->actors.actors);
    if (impl_->holds_timeline)
      virtual_timeline{impl_->sys}.run();
    impl_.reset();
    return;
  }
  try {
    stop("the job was destroyed before its end");
    wait();
  } catch (const std::exception&) {  // a destructor does not throw: the run's failure goes unread
  }
  impl_.reset();
}

const job_handles& job::handles() const { return self().handles; }

void job::start() {
  auto& p = self();
  if (p.started)
    return;
  p.started = true;
  start_actors(p.sys, *p.driver, p.actors, p.plan.cfg, p.start);
}

void job::stop(const std::string& why) {
  auto& p = self();
  if (p.started && !p.waited)
    (*p.driver)->send(p.actors.actors.core.coordinator, stop_request{why});
}

run_result job::wait() {
  auto& p = self();
  if (!p.started)
    throw std::logic_error("syncpoint::job::wait: the job was not started");
  if (p.waited)
    throw std::logic_error("syncpoint::job::wait: the job's result was taken already");
  p.waited = true;
  double clock_busy_s = 0;
  auto outcome =
    run_to_end(p.sys, *p.driver, p.actors, p.plan.cfg, p.start, p.write_checkpoint, p.on_progress, p.stop_when,
               clock_busy_s);
  p.release_timeline();  // its actors are gone: the system may take another virtual-clock job
  auto result = finish(p.plan.cfg, p.start, std::move(outcome));
  result.profile.clock_busy_s = clock_busy_s;
  return result;
}

}  // namespace syncpoint
