/// \file
/// A job's actors in a program's own actor system: spawn them from a
/// job_config, hold their typed handles, add actors of your own that follow the
/// run (job_observer_actor), start it, and wait for its result. train() is this
/// with a system of its own and no observers.
///
/// ```cpp
/// caf::actor_system_config sys_cfg;
/// syncpoint::configure(sys_cfg, cfg);              // messages, and the clock's scheduler
/// caf::actor_system sys{sys_cfg};
/// auto watcher = sys.spawn(my_observer);           // a job_observer_actor
/// auto j = syncpoint::job::spawn(sys, cfg, {{watcher}});
/// j.start();
/// syncpoint::run_result r = j.wait();              // virtual clock: runs the whole system to the end
/// ```
#pragma once

#include <syncpoint/interfaces.hpp>
#include <syncpoint/train.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace syncpoint {

/// Sets up `sys_cfg` for jobs like `cfg`: registers syncpoint's messages and
/// picks the scheduler its clock needs (the virtual clock: CAF's testing
/// scheduler, which only a job's wait() drives; the real clock: a shared
/// queue with one thread per worker, up to the cores, or cfg.threads).
void configure(caf::actor_system_config& sys_cfg, const job_config& cfg);

/// What a program may hold of a running job besides the job itself. (The
/// job's own actors are the library's: stop it with job::stop, follow it
/// with observers.)
struct job_handles {
  job_reader_actor reader;          ///< answers counts_request with the run's counts so far
  int32_t workers = 0;              ///< its workers: ids 0 .. workers - 1
  std::vector<uint64_t> ps_bounds;  ///< PS shard k holds model values [ps_bounds[k], ps_bounds[k + 1])
};

/// What job::spawn takes besides the config.
struct job_options {
  /// Told of the run from its start (see job_observer_actor). The job
  /// monitors them: one that fails ends the run with user_actor_failed.
  std::vector<job_observer_actor> observers;
  /// Progress reports, when cfg.progress (called on the coordinator's thread):
  /// instead of stderr.
  progress_fn on_progress;
  /// Asked while wait() waits, on wait()'s thread: about every 100 ms on the
  /// real clock, between events on the virtual one. The first non-empty
  /// answer stops the run as job::stop(answer) would. What a program that
  /// waits in wait() uses to stop on a signal or a flag another thread sets.
  ///
  /// ```cpp
  /// std::atomic<bool> interrupted{false};  // set by a signal handler
  /// opts.stop_when = [&] { return interrupted ? std::string("interrupted") : std::string(); };
  /// ```
  std::function<std::string()> stop_when;
};

/// One job's actors in `sys`. Not copyable; movable. The system must outlive it.
class job {
 public:
  /// Checks `cfg` (throws config_error naming what is wrong), loads its data
  /// and spawns its actors, not yet started. Throws config_error when `sys`
  /// was not configured for cfg's clock, or when a virtual-clock job already
  /// runs in it (one timeline drives the whole system). Like train(), it
  /// tunes the process's allocator and sets LibTorch to one thread per worker
  /// (docs/api.md, "Process-wide settings").
  static job spawn(caf::actor_system& sys, const job_config& cfg, job_options opts = {});

  job(job&&) noexcept;  ///< moves the job; the moved-from one is empty (its calls throw std::logic_error)
  job& operator=(job&&) noexcept;  ///< ends this job as the destructor does, then takes the other's
  ~job();  ///< a job started but not waited for is stopped and waited for; one never started, stopped

  const job_handles& handles() const;  ///< what a program may hold of it

  /// Starts the run (once). On the real clock it runs from here on (its clock
  /// started at spawn: start soon after); on the virtual clock nothing
  /// happens until wait().
  void start();

  /// Ends the run early, as a limit would: the workers stop, the final
  /// evaluation follows, wait() returns the result, and observers hear `why`
  /// as the reason the run ended. (Ignored once the run ends on its own.)
  void stop(const std::string& why);

  /// The run's result, once it has ended (written to cfg.out_dir when set).
  /// Throws std::runtime_error when the run failed (a lost parameter server,
  /// a failed observer), after stopping its actors.
  run_result wait();

 private:
  struct impl;
  explicit job(std::unique_ptr<impl> p);
  impl& self() const;
  void release() noexcept;
  std::unique_ptr<impl> impl_;
};

}  // namespace syncpoint
