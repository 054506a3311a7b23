#include "runtime/cluster/jobs/submitter_relay.hpp"

#include <deque>
#include <optional>
#include <utility>

namespace syncpoint::cluster {

namespace {

// Lines kept for a submitter that is away (the newest; a job's lines between
// a head's restart and the reattach are a few: its start, some evaluations).
constexpr size_t kept_lines = 256;

struct relay_state {
  relay_setup setup;
  std::deque<std::string> lines;      // said while no submitter listened
  std::optional<job_result> outcome;  // the job ended (before a submitter came, or it was handed over)
  bool leaving = false;               // the head shuts down: no submitter will come
  bool handed = false;                // the outcome went to the submitter: the relay ends when it does
  static inline const char* name = "submitter_relay";
};

using relay_ptr = submitter_relay_actor::stateful_pointer<relay_state>;

// The relay ends when the submitter's client does, which it does on reading the
// outcome: that is the receipt. Ending at once instead could let a head that
// shuts down (it waits for its relays) end its process before the outcome left
// it. A client that does not end within 10 s is not waited for.
constexpr auto receipt_wait = std::chrono::seconds(10);

// The outcome (kept: a submitter that reattaches before the receipt is handed it too).
void hand_over(relay_ptr self) {
  auto& st = self->state;
  self->send(st.setup.submitter, finished_atom::value, *st.outcome);
  if (!std::exchange(st.handed, true))
    self->delayed_send(self, receipt_wait, timeout_atom::value);
}

void follow(relay_ptr self, client_actor submitter) {
  auto& st = self->state;
  if (st.setup.submitter)
    self->demonitor(st.setup.submitter.address());
  st.setup.submitter = std::move(submitter);
  if (st.setup.submitter)
    self->monitor(st.setup.submitter);
}

submitter_relay_actor::behavior_type relay(relay_ptr self, relay_setup setup) {
  auto submitter = std::move(setup.submitter);
  self->state.setup = std::move(setup);
  follow(self, std::move(submitter));
  // The submitter went away: so does the relay, and the job runner, seeing
  // its client gone, stops the job.
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.source == self->state.setup.submitter.address())
      self->quit(dm.reason ? dm.reason : caf::error{caf::exit_reason::user_shutdown});
  });
  return {
    [=](progress_atom, std::string& line) {
      auto& st = self->state;
      if (st.setup.submitter) {
        self->send(st.setup.submitter, progress_atom::value, std::move(line));
        return;
      }
      st.lines.push_back(std::move(line));
      if (st.lines.size() > kept_lines)
        st.lines.pop_front();
    },
    [=](finished_atom, job_result& r) {
      auto& st = self->state;
      self->send(st.setup.head, finished_atom::value, credential{st.setup.head_token}, st.setup.id, r.state, r.message);
      st.outcome = std::move(r);
      if (st.setup.submitter)
        hand_over(self);
      else if (st.leaving)
        self->quit();
    },
    [=](leave_atom) {
      self->state.leaving = true;
      if (!self->state.setup.submitter)
        self->quit();
    },
    [=](timeout_atom) { self->quit(); },  // no receipt came in time
    [=](reattach_atom, client_actor& submitter) {
      auto& st = self->state;
      follow(self, std::move(submitter));
      if (!st.setup.submitter)
        return;
      for (auto& line : std::exchange(st.lines, {}))  // what it missed, in order
        self->send(st.setup.submitter, progress_atom::value, std::move(line));
      if (st.outcome)
        hand_over(self);
    },
  };
}

}  // namespace

submitter_relay_actor spawn_submitter_relay(caf::actor_system& sys, relay_setup setup) {
  return sys.spawn(relay, std::move(setup));
}

}  // namespace syncpoint::cluster
