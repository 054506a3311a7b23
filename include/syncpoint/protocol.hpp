/// \file
/// The protocol API. A synchronization protocol decides, for each push the
/// parameter server accepted, which workers may go on and when the PS commits.
/// It is hosted by the coordinator actor and sees the run only through
/// `coordinator_api`; it never touches the PS, workers or gradients.
///
/// ```cpp
/// class my_protocol : public syncpoint::protocol {
///  public:
///   explicit my_protocol(const syncpoint::protocol_options&) {}
///   void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id w) override { c.release(w); }  // ASP
/// };
/// SYNCPOINT_REGISTER_PROTOCOL("mine", "releases every worker at once", my_protocol);
/// ```
#pragma once

#include <syncpoint/local_work.hpp>
#include <syncpoint/messages.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace syncpoint {

/// One option a protocol declares where it registers: the CLI flag
/// `--NAME`, the config-file key `NAME`, and a line of `syncpoint protocols`.
/// Protocols that declare the same name must declare the same type.
struct option_spec {
  /// The value's type.
  enum class kind { integer, real, text };
  std::string name;  ///< the option's name: `--NAME`, config key NAME
  kind type = kind::integer;  ///< its type
  std::string default_value;  ///< as text ("": none)
  std::string help;  ///< one line for `syncpoint protocols`
  double min = -1e300;               ///< integer, real: inclusive bounds
  double max = 1e300;  ///< integer, real: inclusive bounds
  std::vector<std::string> choices;  ///< text: the allowed values (empty: any)
  std::string short_name;            ///< "s": also -s, and ssp(s=3) in labels
};

/// Values of protocol options by name. Whoever runs a job sets the ones it
/// wants; make_protocol checks them against the declarations and fills in
/// the declared defaults, so a protocol reads every option it declared. The
/// runner adds the job's context as "job.model", "job.dataset", "job.workers".
///
/// ```cpp
/// syncpoint::protocol_options o;
/// o.set("staleness", 2);
/// auto p = syncpoint::make_protocol("ssp", o);   // inside: o.integer("staleness") == 2
/// ```
class protocol_options {
 public:
  /// Sets option `name` to `value` (checked later, against its declaration).
  protocol_options& set(const std::string& name, const std::string& value);
  protocol_options& set(const std::string& name, const char* value) { return set(name, std::string(value)); }  ///< as text
  protocol_options& set(const std::string& name, long long value);  ///< an integer
  protocol_options& set(const std::string& name, int value) { return set(name, static_cast<long long>(value)); }  ///< an integer
  protocol_options& set(const std::string& name, double value);  ///< a real

  bool has(const std::string& name) const { return values_.count(name) > 0; }  ///< whether `name` is set
  /// The value of a declared option; throws std::invalid_argument if it is unset.
  long long integer(const std::string& name) const;
  double real(const std::string& name) const;  ///< as integer(), for a real
  const std::string& text(const std::string& name) const;  ///< as integer(), for text
  /// Every value set, as text, by name.
  const std::map<std::string, std::string>& values() const { return values_; }

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, protocol_options& x) {
    return f(caf::meta::type_name("protocol_options"), x.values_);
  }

 private:
  std::map<std::string, std::string> values_;
};

/// What a protocol may see and do. The coordinator implements it; tests use a recorder.
class coordinator_api {
 public:
  virtual ~coordinator_api() = default;
  /// Worker ids are 0..workers()-1; some may have been lost.
  virtual int workers() const = 0;
  virtual bool live(worker_id w) const = 0;  ///< whether `w` is still in the run
  virtual std::vector<worker_id> live_workers() const = 0;  ///< O(n): once per round, not per push
  /// How many workers are live, and how many of those wait; the clock of the
  /// slowest live worker (0 with none). The coordinator answers in O(1), so a
  /// protocol that decides per push with these stays O(log n) at 4096 workers
  /// (docs/performance.md). The defaults count through live_workers().
  virtual int live_count() const;
  virtual int waiting_count() const;  ///< live workers waiting for a release
  virtual uint64_t min_clock() const;  ///< the slowest live worker's clock
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
  /// From the next release on, every worker updates its own copy with each
  /// gradient (`local_step`: a plain SGD step at the PS's rate) and/or
  /// computes the next gradient while a push is in flight (`overlap`): WBSP's
  /// local work, set for every worker at once (set_local_work says more).
  virtual void set_worker_behavior(bool local_step, bool overlap) {}

  // -- local updates (docs/protocols.md, "Local updates") -----------------------
  /// What worker `w` does between its exchanges from its next release on:
  /// how many local steps, with which inner optimizer, what it pushes, how a
  /// pull merges and which fragment of the model it exchanges
  /// (<syncpoint/local_work.hpp>). Changeable at any release; a worker keeps
  /// its inner optimizer's state across exchanges.
  ///
  /// ```cpp
  /// syncpoint::local_work h;  h.steps = 10;  h.inner.type = syncpoint::inner_kind::sgd;  h.push = syncpoint::push_kind::outer;
  /// for (auto w : c.live_workers()) c.set_local_work(w, h);   // Local SGD, H = 10
  /// ```
  virtual void set_local_work(worker_id w, const local_work& work) {}
  /// What `w` was last given (the default: one gradient an exchange).
  virtual local_work local_work_of(worker_id w) const { return {}; }

  // -- time ---------------------------------------------------------------------
  /// Releases `w` at time `t` (seconds on the run clock; at once if t <= now()).
  /// Exact on the virtual clock, a delayed message on the real one. A release
  /// of `w` before then, another release_at, or its loss cancels it.
  virtual void release_at(worker_id w, double t, bool pull = true) = 0;
  /// Calls the protocol's on_timer(c, tag) at time `t` (at once if t <= now()).
  virtual void set_timer(double t, uint64_t tag) = 0;

  // -- batch sizes ----------------------------------------------------------------
  /// Worker `w` computes its gradients on `batch` examples from its next
  /// release on. Gradient weights follow the weight rule: b_w / sum of the
  /// live workers' batches (1/n when all are equal).
  virtual void set_batch(worker_id w, uint32_t batch) = 0;
  virtual uint32_t batch(worker_id w) const = 0;  ///< worker `w`'s batch size

  // -- the run ------------------------------------------------------------------------
  /// Samples pushed so far, and the run's sample budget (0: none).
  virtual uint64_t samples() const { return 0; }
  virtual uint64_t sample_budget() const { return 0; }  ///< the run's sample budget (0: none)
  /// The run's time cap in seconds on its clock (0: none).
  virtual double time_budget() const { return 0; }
  /// How far the run is, 0..1 (may pass 1 while it stops): by its sample
  /// budget, else by its time cap, else 0.
  double run_fraction() const {
    if (sample_budget() > 0)
      return static_cast<double>(samples()) / static_cast<double>(sample_budget());
    return time_budget() > 0 ? now() / time_budget() : 0.0;
  }
  /// The PS's momentum from now on: `mu`; with `clear`, its velocity is reset
  /// first; with `ramp_steps` > 0 the coefficient rises linearly from 0 to mu
  /// over that many updates.
  virtual void set_momentum(double mu, bool clear, uint32_t ramp_steps) {}
  /// The momentum the run was configured with.
  virtual double base_momentum() const { return 0; }
  /// Writes an event into the trace (kind, words, a number), e.g. a switch.
  virtual void mark(const std::string& kind, const std::string& note, double value = 0) {}
  /// Evaluates the model as it is now (an "eval" event follows).
  virtual void evaluate() {}
};

class protocol_archive;  // <syncpoint/protocol_archive.hpp>

/// A synchronization protocol: the coordinator calls it at the start, on every push, loss,
/// join and timer; it decides through the coordinator_api it is given. Register one with
/// SYNCPOINT_REGISTER_PROTOCOL (docs/writing-a-protocol.md).
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
  /// Worker `w` joined the running job (an elastic job grew, or a lost
  /// worker came back on another node). It is live and waiting for its first
  /// release, with the slowest live worker's clock; the weights are already
  /// renormalised. Take it in at a clean point: release it now (the default,
  /// right for protocols without barriers), or leave it waiting for the next
  /// barrier, which then releases it with everyone.
  virtual void on_joined(coordinator_api& c, worker_id w) { c.release(w); }
  /// A timer set with c.set_timer(t, tag) is due.
  virtual void on_timer(coordinator_api& c, uint64_t tag) {}
  /// Saves or loads (`ar.loading()`) the protocol's own state for a
  /// checkpoint: every member that changes during a run, in a fixed order.
  /// A resumed protocol is constructed from the same options, then loaded,
  /// and must decide exactly as the one that was saved. A protocol whose
  /// state lives in the coordinator only writes an empty body. The default
  /// refuses: a run of a protocol without it cannot be checkpointed. The
  /// archive is <syncpoint/protocol_archive.hpp> (installed; it needs cereal).
  ///
  /// ```cpp
  /// void checkpoint(syncpoint::protocol_archive& ar) override { ar(pushed_, round_); }
  /// ```
  virtual void checkpoint(protocol_archive& ar);
};

/// True when there is a live worker and every live worker is waiting: the
/// moment a barrier can open.
bool everyone_waiting(const coordinator_api& c);

/// Makes a protocol from its (checked) options.
using protocol_factory = std::function<std::unique_ptr<protocol>(const protocol_options&)>;

/// Adds a protocol with the options it reads; returns false (and says why on
/// stderr) if the name is taken or an option clashes with another protocol's.
/// `job_defaults`: the job options it is meant to run with unless a job says
/// otherwise, by their command-line names, e.g. DiLoCo's outer step
/// {"optimizer": "nesterov", "lr": "0.7", "momentum": "0.9"}.
bool register_protocol(const std::string& name, const std::string& summary,
                       protocol_factory factory, std::vector<option_spec> options = {},
                       std::map<std::string, std::string> job_defaults = {});

/// The job options `protocol` runs with unless they are given (empty for
/// most): `syncpoint train` applies them to the options its command line and
/// config file leave unset, and `syncpoint protocols` lists them. A program
/// applies them itself (apply_job_defaults, <syncpoint/train.hpp>).
std::map<std::string, std::string> protocol_job_defaults(const std::string& protocol);

/// Builds the protocol registered as `name` from `opts` (checked, defaults
/// filled in). Throws std::invalid_argument naming what is wrong: an unknown
/// protocol (listing the valid ones), an unknown option, a value of the wrong
/// type or out of range.
std::unique_ptr<protocol> make_protocol(const std::string& name, const protocol_options& opts);

/// Checks every value in `opts` against the option of that name, whichever
/// protocol declared it; throws std::invalid_argument naming the problem.
void check_protocol_options(const protocol_options& opts);

/// Whether a protocol is registered as `name`.
bool has_protocol(const std::string& name);

/// Name -> one-line summary, sorted by name.
std::map<std::string, std::string> protocol_catalog();

/// How a run is named in tables: the protocol, with the options that have a
/// short name and those given a non-default value, e.g. "ssp(s=3)".
std::string protocol_label(const std::string& protocol, const protocol_options& given);

/// The options `protocol` declared (empty for an unknown name).
std::vector<option_spec> protocol_option_specs(const std::string& protocol);

/// Every declared option once, by name, with the protocols that declared it.
std::map<std::string, std::pair<option_spec, std::vector<std::string>>> all_protocol_options();

namespace detail {
template <class T, class = void>
struct declared_options {
  static std::vector<option_spec> get() { return {}; }
};
template <class T>
struct declared_options<T, std::void_t<decltype(T::options())>> {
  static std::vector<option_spec> get() { return T::options(); }
};
template <class T, class = void>
struct declared_job_defaults {
  static std::map<std::string, std::string> get() { return {}; }
};
template <class T>
struct declared_job_defaults<T, std::void_t<decltype(T::job_defaults())>> {
  static std::map<std::string, std::string> get() { return T::job_defaults(); }
};
}  // namespace detail

}  // namespace syncpoint

/// Registers `Type` (constructible from `const protocol_options&`) at
/// start-up, with the options of its `static std::vector<option_spec> options()`
/// and the job defaults of its `static std::map<std::string, std::string> job_defaults()`
/// if it has them.
#define SYNCPOINT_REGISTER_PROTOCOL(name, summary, Type)                                  \
  static const bool syncpoint_registered_##Type = ::syncpoint::register_protocol(         \
    name, summary, [](const ::syncpoint::protocol_options& o) -> std::unique_ptr<::syncpoint::protocol> { \
      return std::make_unique<Type>(o);                                                   \
    }, ::syncpoint::detail::declared_options<Type>::get(), ::syncpoint::detail::declared_job_defaults<Type>::get())
