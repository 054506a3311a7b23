/// \file
/// What a program's own actors may send a running job, and what they hear
/// from it: typed handles, so the compiler checks every message (sending one
/// outside them does not compile), and CAF checks them again when a handle
/// crosses nodes. The job's own actors (workers, parameter server,
/// coordinator, evaluator, tracer) and what they exchange are the library's.
///
/// ```cpp
/// // An observer: told of a run from its start (job_options::observers, submit_options::observers).
/// syncpoint::job_observer_actor::behavior_type printer(syncpoint::job_observer_actor::pointer self) {
///   return {
///     [=](const syncpoint::job_started& s) {
///       self->send(s.control, syncpoint::mark_request{"watching", 1.0});
///     },
///     [](const syncpoint::eval_result& e) { std::cout << e.accuracy << "\n"; },
///     [](const syncpoint::progress_report&) {},
///     [](const syncpoint::phase_change&) {},
///     [](const syncpoint::run_ended& e) { std::cout << "ended: " << e.why << "\n"; },
///   };
/// }
/// ```
#pragma once

#include <syncpoint/messages.hpp>

#include <caf/stateful_actor.hpp>  // (a program's own observer or controller: its typed, stateful actor)
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <string>

namespace syncpoint {

/// What anyone may ask a job that runs in this process: its counts so far
/// (reading them changes nothing). job::handles() gives it.
///
/// ```cpp
/// caf::scoped_actor self{system};
/// self->request(j.handles().reader, caf::infinite, syncpoint::counts_request{})
///   .receive([](const syncpoint::job_counts& c) { std::cout << c.samples << " samples\n"; },
///            [](caf::error&) {});
/// ```
using job_reader_actor = caf::typed_actor<caf::replies_to<counts_request>::with<job_counts>>;

/// What a job's observers may send it (the handle comes in job_started):
/// end the run early with a reason (which run_ended then carries); evaluate
/// the model as it is now (an "eval" event and an evaluation to every
/// observer follow); write a "mark" event into the trace; take a checkpoint
/// now (real clock, with a checkpoint folder). A job takes them
/// from its observers and its own driver only; on a cluster they go through
/// the head with the job's stop token.
///
/// ```cpp
/// self->send(control, syncpoint::stop_request{"no progress"});
/// ```
using job_control_actor = caf::typed_actor<caf::reacts_to<stop_request>, caf::reacts_to<eval_request>,
                                           caf::reacts_to<mark_request>, caf::reacts_to<checkpoint_request>>;

/// A job -> each observer, first: the handle to control the job with.
struct job_started {
  job_control_actor control;  ///< stop, evaluate, mark
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_started& x) {
  return f(caf::meta::type_name("job_started"), x.control);
}

/// An actor of a program's own that follows a job (job_options::observers):
/// it hears job_started with the job's control handle, every evaluation
/// (periodic and final, as the trace records them), every progress report,
/// every phase change, and last, run_ended with why the run ended. A job
/// monitors its observers: one that fails while the run goes on ends it with
/// the error `syncpoint.user_actor_failed`; one that quits normally is just
/// dropped. On the virtual clock an observer runs in virtual time with the
/// job: it must not block. (The example at the top of this file is one.)
using job_observer_actor = caf::typed_actor<caf::reacts_to<job_started>, caf::reacts_to<eval_result>,
                                            caf::reacts_to<progress_report>, caf::reacts_to<phase_change>,
                                            caf::reacts_to<run_ended>>;

}  // namespace syncpoint
