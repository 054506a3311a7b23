// The protocol API. A synchronization protocol decides, for each push the
// parameter server accepted, which workers may go on and when the PS commits.
// It is hosted by the coordinator actor and sees the run only through
// `coordinator_api`; it never touches the PS, workers or gradients.
//
//   class my_protocol : public syncpoint::protocol {
//    public:
//     void on_push(coordinator_api& c, worker_id w) override { c.release(w); }  // ASP
//   };
//   SYNCPOINT_REGISTER_PROTOCOL("mine", "releases every worker at once", my_protocol);
#pragma once

#include "runtime/messages.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace syncpoint {

/// Options every protocol may read; unknown ones are ignored.
struct protocol_options {
  int staleness = 3;  // ssp
  // elastic-bsp
  int lookahead = 15;                          // R: push opportunities predicted per worker
  std::string zipline_variant = "zipline-opt-bs";
  int interval_window = 1;                     // k: intervals averaged for a prediction
  /// Options of protocols without a flag of their own (CLI: --param k=3,x=0.5).
  std::map<std::string, double> params;

  double param(const std::string& key, double fallback) const {
    auto i = params.find(key);
    return i == params.end() ? fallback : i->second;
  }
};

/// What a protocol may see and do. The coordinator implements it; tests use a recorder.
class coordinator_api {
 public:
  virtual ~coordinator_api() = default;
  /// Worker ids are 0..workers()-1; some may have been lost.
  virtual int workers() const = 0;
  virtual bool live(worker_id w) const = 0;
  virtual std::vector<worker_id> live_workers() const = 0;
  /// c_w: gradients worker `w` has pushed (including the push being handled).
  virtual uint64_t clock(worker_id w) const = 0;
  /// Seconds since the start of the run, on the run's clock.
  virtual double now() const = 0;
  /// Whether `w` is waiting for a release (it pushed, or has not started yet).
  virtual bool waiting(worker_id w) const = 0;
  /// Lets `w` start its next iteration; with `pull` it first pulls the newest
  /// version the coordinator knows of. No-op for a worker that is not waiting.
  virtual void release(worker_id w, bool pull = true) = 0;
  /// Has the PS apply its buffered pushes as one update (version + 1).
  virtual void commit() = 0;
  /// Apply each push on arrival, or buffer until `commit`, or (gated) apply
  /// on arrival while pulls see only what was last published.
  virtual void set_mode(ps_mode mode) = 0;
  /// Gated mode: pulls from now on get the PS's current weights.
  virtual void publish() {}
  /// From the next release on, workers update their own copy with each
  /// gradient (`local_step`) and/or compute the next gradient while a push is
  /// in flight (`overlap`).
  virtual void set_worker_behavior(bool local_step, bool overlap) {}
};

class protocol {
 public:
  virtual ~protocol() = default;
  /// Called once when all workers are ready (all waiting). Default: set
  /// immediate mode and release everyone.
  virtual void on_start(coordinator_api& c);
  /// Worker `w` pushed a gradient; `c.clock(w)` already counts it.
  virtual void on_push(coordinator_api& c, worker_id w) = 0;
  /// Worker `w` is gone (crash, lost node); it is no longer live.
  virtual void on_lost(coordinator_api& c, worker_id w) {}
};

/// True when there is a live worker and every live worker is waiting: the
/// moment a barrier can open.
bool everyone_waiting(const coordinator_api& c);

using protocol_factory = std::function<std::unique_ptr<protocol>(const protocol_options&)>;

/// Adds a protocol; returns false if the name is taken.
bool register_protocol(const std::string& name, const std::string& summary,
                       protocol_factory factory);

/// Builds the protocol registered as `name`; throws std::invalid_argument
/// whose message lists the valid names.
std::unique_ptr<protocol> make_protocol(const std::string& name, const protocol_options& opts);

bool has_protocol(const std::string& name);

/// Name -> one-line summary, sorted by name.
std::map<std::string, std::string> protocol_catalog();

}  // namespace syncpoint

/// Registers `Type` (constructible from `const protocol_options&`) at start-up.
#define SYNCPOINT_REGISTER_PROTOCOL(name, summary, Type)                                  \
  static const bool syncpoint_registered_##Type = ::syncpoint::register_protocol(         \
    name, summary, [](const ::syncpoint::protocol_options& o) -> std::unique_ptr<::syncpoint::protocol> { \
      return std::make_unique<Type>(o);                                                   \
    })
