// submit(): a job sent to the head and followed from this process. Two
// actors of this process stand for the job here: the client, which the head's
// job runner reports to (lines, and for observers every event in the
// coordinator's order, then the result), and the control relay, which the
// observers hold as the job's job_control_actor and which asks the head, with
// the job's stop token, to stop the job, evaluate, mark the trace or take a
// checkpoint.
#include <syncpoint/cluster.hpp>
#include "runtime/records/run_files.hpp"

#include "core/messages.hpp"
#include "runtime/cluster/wire/connect.hpp"
#include "runtime/cluster/jobs/placement.hpp"
#include "runtime/cluster/client/submit.hpp"

#include <cstdio>
#include <filesystem>
#include <thread>

namespace syncpoint::cluster {

namespace {

using namespace std::chrono_literals;

// The observers' job_control_actor, plus (submit, id, stop token) from
// submit() once the head took the job, and (reattach, head) once a head that
// came back took the job again.
using relay_actor = job_control_actor::extend<caf::reacts_to<submit_atom, uint64_t, std::string>,
                                              caf::reacts_to<reattach_atom, head_actor>>;

struct relay_state {
  head_actor head;
  uint64_t id = 0;
  std::string token;
  std::vector<std::function<void()>> held;  // asked before the head answered the submission
  static inline const char* name = "submit_control";
};

using relay_ptr = relay_actor::stateful_pointer<relay_state>;

// Sends `xs` after (job id, stop token) to the head; the head's answer (or
// refusal, once the job ended) changes nothing here.
template <class Atom, class... Ts>
void ask_head(relay_ptr self, Atom what, const Ts&... xs) {
  auto send = [=] {
    self->request(self->state.head, std::chrono::seconds(30), what, self->state.id, credential{self->state.token}, xs...)
      .then([](bool) {}, [](caf::error&) {});
  };
  if (self->state.token.empty())
    self->state.held.push_back(send);
  else
    send();
}

relay_actor::behavior_type control_relay(relay_ptr self, head_actor head) {
  self->state.head = std::move(head);
  return {
    [=](submit_atom, uint64_t id, std::string& token) {
      self->state.id = id;
      self->state.token = std::move(token);
      for (auto& send : self->state.held)
        send();
      self->state.held.clear();
    },
    [=](reattach_atom, head_actor& head) { self->state.head = std::move(head); },
    [=](const stop_request& r) { ask_head(self, stop_atom::value, r.why); },
    [=](eval_request) { ask_head(self, eval_atom::value); },
    [=](const mark_request& r) { ask_head(self, mark_atom::value, r.note, r.value); },
    [=](const checkpoint_request& r) { ask_head(self, checkpoint_atom::value, r.why); },
  };
}

struct client_state {
  caf::actor waiter;  // submit()'s scoped actor
  relay_actor relay;
  std::vector<job_observer_actor> observers;  // by their place in submit_options; gone ones invalid
  bool print = false;
  std::function<void(const std::string&)> on_line;
  bool greeted = false;
  std::string failure;  // an observer's, in words: the job's result says failed
  static inline const char* name = "submit_client";
};

// The job's client and, when observers follow it, its follower.
using following_client_actor = client_actor::extend_with<follower_actor>;
using client_ptr = following_client_actor::stateful_pointer<client_state>;

template <class T>
void tell_observers(client_ptr self, const T& x) {
  for (auto& o : self->state.observers)
    if (o)
      self->send(o, x);
}

void show(client_ptr self, const std::string& line) {
  if (self->state.on_line) {
    self->state.on_line(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
}

// An observer ended: one that failed stops the job, and the others hear why
// (as a one-process job's observers do); one that quit is just dropped.
void observer_down(client_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  for (size_t k = 0; k < st.observers.size(); ++k) {
    if (!st.observers[k] || st.observers[k].address() != dm.source)
      continue;
    st.observers[k] = job_observer_actor{};
    if (!is_failure(dm.reason) || !st.failure.empty())
      return;
    st.failure = self->system().render(observer_failed(self->system(), k, dm.reason));
    tell_observers(self, run_ended{"failed: " + st.failure});
    st.observers.clear();
    self->send(st.relay, stop_request{"observer " + std::to_string(k) + " of the job failed"});
    return;
  }
}

// Why the run ended, as a one-process job's observers hear it.
std::string end_reason(const job_result& r) {
  if (r.state == job_stage::failed)
    return "failed: " + r.message;
  if (r.state == job_stage::stopped)
    return r.message;
  return r.outcome.end_reason.empty() ? "end" : r.outcome.end_reason;
}

following_client_actor::behavior_type follow_client(client_ptr self, client_state init) {
  self->state = std::move(init);
  for (auto& o : self->state.observers)
    self->monitor(o);
  self->set_down_handler([=](caf::down_msg& dm) { observer_down(self, dm); });
  return {
    [=](progress_atom, const std::string& line) { show(self, line); },
    [=](progress_atom, const progress_report& r) {
      if (self->state.print)
        show(self, r.line);
      tell_observers(self, r);
    },
    [=](start_atom) {  // the run began (again, after a restart: the observers were told already)
      if (!std::exchange(self->state.greeted, true))
        tell_observers(self, job_started{caf::actor_cast<job_control_actor>(self->state.relay)});
    },
    [=](eval_atom, const eval_result& r) { tell_observers(self, r); },
    [=](phase_atom, const phase_change& p) { tell_observers(self, p); },
    [=](finished_atom, job_result& r) {
      auto& st = self->state;
      if (!st.failure.empty()) {
        r.state = job_stage::failed;
        r.message = st.failure;
      }
      tell_observers(self, run_ended{end_reason(r)});
      caf::anon_send(st.waiter, std::move(r));  // the waiter is a scoped (untyped) actor
      self->quit();
    },
  };
}

// The head reads and writes checkpoints: name the folders absolutely (on a
// head on this machine they are the ones meant).
job_config checked(const job_config& given) {
  auto cfg = given;
  if (cfg.clock == clock_kind::virtual_time)
    throw config_error("a cluster job runs on the real clock: set clock = clock_kind::real (virtual time runs "
                       "in one process: train() or job::spawn)");
  validate(cfg);  // --placement among the rest
  for (auto* dir : {&cfg.checkpoint_dir, &cfg.resume_dir})
    if (!dir->empty())
      *dir = std::filesystem::absolute(*dir).lexically_normal().string();
  return cfg;
}

}  // namespace

caf::expected<head_actor> reattach(caf::scoped_actor& self, const endpoint& at, uint64_t id,
                                   const std::string& stop_token, const client_actor& client,
                                   const caf::node_id& lost, std::chrono::seconds wait,
                                   const std::function<std::string()>& stop_when) {
  auto& sys = self->system();
  auto deadline = std::chrono::steady_clock::now() + wait;
  std::string last = "no head answered at " + at.host + ":" + std::to_string(at.port);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto why = stop_when ? stop_when() : std::string(); !why.empty())
      return caf::make_error(caf::sec::runtime_error, "the wait for it was interrupted (" + why + ")");
    auto head = connect_head(sys, at, std::chrono::seconds(5));
    if (!head) {
      last = error_words(sys, head.error());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    // The middleman may hand back its proxy of the lost head for a moment, and a request to it
    // can go unanswered: asked briefly, then again. A head that came back is another process.
    auto patience = head->node() == lost ? std::chrono::seconds(3) : std::chrono::seconds(30);
    caf::error refused;
    bool later = false;
    self->request(*head, patience, reattach_atom::value, id, credential{stop_token}, client)
      .receive([](bool) {}, [&](caf::error& e) {
        // The head's own refusals are final but "not now"; anything else (the middleman's proxy
        // of the dead head, a timeout) is tried again.
        later = e.category() != caf::atom("syncpoint") || e.code() == static_cast<uint8_t>(sp_error::not_now);
        refused = std::move(e);
      });
    if (!refused)
      return *head;
    if (!later)
      return refused;
    last = error_words(sys, refused);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return caf::make_error(caf::sec::runtime_error,
                         "it did not come back within " + std::to_string(wait.count()) + " s (" + last + ")");
}

std::chrono::seconds result_deadline(const job_config& cfg) {
  return std::chrono::seconds(cfg.max_time_s > 0 ? static_cast<int64_t>(cfg.max_time_s * 2) + 600
                                                 : int64_t{30} * 24 * 3600);
}

awaited_result await_result(caf::scoped_actor& self, const head_actor& head, uint64_t id,
                            const std::string& stop_token, const std::function<std::string()>& stop_when,
                            std::chrono::seconds limit, const std::function<void(const std::string&)>& stop_failed) {
  awaited_result out;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!out.got && !out.lost && std::chrono::steady_clock::now() < deadline) {
    if (auto why = stop_when ? stop_when() : std::string(); !why.empty())
      self->request(head, std::chrono::seconds(10), stop_atom::value, id, credential{stop_token}, why)
        .receive([](bool) {}, [&](caf::error& e) {
          if (stop_failed)
            stop_failed(error_words(self->system(), e));
        });
    self->receive(
      [&](job_result& r) {
        out.result = std::move(r);
        out.got = true;
      },
      [&](caf::down_msg&) { out.lost = true; },
      caf::after(std::chrono::milliseconds(100)) >> [] {});
  }
  return out;
}

}  // namespace syncpoint::cluster

namespace syncpoint {

void configure_submitter(caf::actor_system_config& sys_cfg, const submit_options& opts) {
  cluster::tls_files tls{opts.tls_cert, opts.tls_key, opts.tls_ca};
  if (tls.enabled())
    if (auto why = cluster::check_tls(tls); !why.empty())
      throw config_error("submit_options TLS files: " + why);
  cluster::configure_cluster(sys_cfg, tls);
}

namespace {

using namespace cluster;

// The head's yes to a job: its id, the token that stops it, and whether the head keeps a journal.
struct accepted {
  uint64_t id = 0;
  std::string stop_token;
  bool journaled = false;
};

cluster_error::kind kind_of(const caf::error& e) {
  return e.category() == caf::atom("syncpoint") ? cluster_error::kind::refused : cluster_error::kind::lost;
}

template <class Client>
caf::expected<accepted> send_job(caf::scoped_actor& self, const head_actor& head, const job_config& cfg,
                                 const Client& client, const submit_options& opts) {
  accepted out;
  caf::error refusal;
  auto follower = opts.observers.empty() ? follower_actor{} : follower_actor{client};
  self->request(head, std::chrono::seconds(60), submit_atom::value, cfg, client_actor{client}, credential{opts.token}, follower)
    .receive([&](uint64_t id, credential& token, bool journal) { out = {id, std::move(token.text), journal}; },
             [&](caf::error& e) { refusal = std::move(e); });
  if (refusal)
    return refusal;
  return out;
}

}  // namespace

cluster_run submit(caf::actor_system& sys, const job_config& given, const submit_options& opts) {
  using namespace cluster;
  auto cfg = checked(given);
  auto at = parse_endpoint(opts.head);
  if (!at)
    throw config_error("submit_options::head expects HOST:PORT, got '" + opts.head + "'");
  auto head = connect_head(sys, *at, opts.connect_timeout);
  if (!head)
    throw cluster_error(cluster_error::kind::unreachable, error_words(sys, head.error()));
  caf::scoped_actor self{sys};
  auto relay = sys.spawn(control_relay, *head);
  client_state init;  // the actor that follows the job here: progress lines, observers, the result
  init.waiter = caf::actor{self};
  init.relay = relay;
  init.observers = opts.observers;
  init.print = cfg.progress;
  init.on_line = opts.on_line;
  auto client = sys.spawn(follow_client, std::move(init));
  auto end_here = [&] {
    self->send_exit(client, caf::exit_reason::user_shutdown);
    self->send_exit(relay, caf::exit_reason::user_shutdown);
  };
  self->monitor(*head);
  auto yes = send_job(self, *head, cfg, client, opts);
  if (!yes) {
    end_here();
    throw cluster_error(kind_of(yes.error()), error_words(sys, yes.error()));
  }
  cluster_run run;
  run.id = yes->id;
  self->send(relay, submit_atom::value, run.id, yes->stop_token);
  if (opts.on_accepted)
    opts.on_accepted(run.id);
  auto stop_failed = [&](const std::string& why) {
    auto line = "the head did not stop job " + std::to_string(run.id) + ": " + why;
    opts.on_line ? opts.on_line(line) : void(std::fprintf(stderr, "%s\n", line.c_str()));
  };
  auto stop_when = [&]() -> std::string {  // checkpoint_when is polled with it
    if (opts.checkpoint_when)
      if (auto why = opts.checkpoint_when(); !why.empty())
        self->send(relay, checkpoint_request{why});
    return opts.stop_when ? opts.stop_when() : std::string();
  };
  auto say = [&](const std::string& line) {
    opts.on_line ? opts.on_line(line) : void(std::fprintf(stderr, "syncpoint: %s\n", line.c_str()));
  };
  auto waited = await_result(self, *head, run.id, yes->stop_token, stop_when, result_deadline(cfg), stop_failed);
  while (waited.lost && yes->journaled && opts.head_wait.count() > 0) {  // head --state: it comes back
    say("lost the connection to the head: waiting up to " + std::to_string(opts.head_wait.count()) +
        " s for it to come back (it keeps a journal)");
    auto back = reattach(self, *at, run.id, yes->stop_token, caf::actor_cast<client_actor>(client), head->node(),
                         opts.head_wait, opts.stop_when);
    if (!back) {
      end_here();
      throw cluster_error(kind_of(back.error()), "lost the connection to the head, and " + error_words(sys, back.error()));
    }
    head = std::move(back);
    self->monitor(*head);
    self->send(relay, reattach_atom::value, *head);
    ++run.head_returns;
    say("the head is back: job " + std::to_string(run.id) + " reattached (it goes on from its newest checkpoint)");
    waited = await_result(self, *head, run.id, yes->stop_token, stop_when, result_deadline(cfg), stop_failed);
  }
  end_here();  // the client has quit when the result came; the relay is done with
  if (!waited.got)
    throw cluster_error(cluster_error::kind::lost, waited.lost ? "lost the connection to the head"
                                                               : "no result within the time limit");
  auto& r = waited.result;
  run.state = to_string(r.state);
  run.message = r.message;
  run.ran = !r.outcome.trace.empty();
  if (run.ran) {
    run.result = run_result_of(cfg, r);
    if (!cfg.out_dir.empty())
      write_run(cfg.out_dir, run.result);
  }
  return run;
}

}  // namespace syncpoint
