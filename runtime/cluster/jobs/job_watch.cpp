#include "runtime/cluster/jobs/job_watch.hpp"

#include "runtime/records/run_files.hpp"
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include <syncpoint/train.hpp>

#include <algorithm>

namespace syncpoint::cluster {

namespace {

struct watch_state {
  watch_config cfg;
  live_job live{job_facts{}};
  tracer_actor tracer;
  coordinator_actor coordinator;
  ps_group ps;
  uint64_t next_event = 0;  // the tracer's index of the next unread event
  int generation = 0;       // a restart's new run: answers about the old one are void
  int pending = 0;          // answers still out this round
  bool dense = false;       // the shards said they hold no tables: not asked again
  bool ended = false;
  static inline const char* name = "job_watch";
};

using watch_ptr = watch_actor::stateful_pointer<watch_state>;

job_facts facts_of(const watch_config& cfg, std::vector<std::string> shards) {
  return {cfg.id, cfg.cfg.protocol, cfg.cfg.workers, "running", 0, std::move(shards), cfg.cfg.lr};
}

void publish(watch_ptr self) {
  auto& st = self->state;
  self->send(st.cfg.link.hub, live_atom::value, st.cfg.id, std::make_shared<const live_job>(st.live));
}

// One answer of this round is in (or failed): the last one publishes.
void answered(watch_ptr self, int generation) {
  auto& st = self->state;
  if (generation != st.generation || st.ended)
    return;
  if (--st.pending == 0)
    publish(self);
}

// A round: the new trace events, the coordinator's counts, each shard's version and tables.
void read(watch_ptr self) {
  auto& st = self->state;
  if (!st.tracer || st.pending > 0 || st.ended)
    return;  // not started, or the last round is still out (a slow round is skipped, not queued)
  auto gen = st.generation;
  auto timeout = std::chrono::seconds(5);
  // Events, counts, each shard's version; and its tables until the first answers show a dense model.
  st.pending = 2 + (st.dense ? 1 : 2) * static_cast<int>(st.ps.size());
  auto failed = [=](caf::error&) { answered(self, gen); };  // the run is ending: its result follows
  self->request(st.tracer, timeout, collect_atom::value, st.next_event)
    .then(
      [=](uint64_t next, std::vector<trace_event>& events) {
        auto& st = self->state;
        if (gen == st.generation && !st.ended) {
          st.next_event = next;
          for (auto& ev : events)
            st.live.add(ev);
        }
        answered(self, gen);
      },
      failed);
  self->request(st.coordinator, timeout, counts_request{})
    .then(
      [=](job_counts& c) {
        auto& st = self->state;
        if (gen == st.generation && !st.ended)
          st.live.set_counts(c.samples, c.worker_samples, c.live, c.at);
        answered(self, gen);
      },
      failed);
  for (size_t k = 0; k < st.ps.size(); ++k)
    self->request(st.ps.shards[k], timeout, counts_atom::value)
      .then(
        [=](uint64_t version) {
          auto& st = self->state;
          if (gen == st.generation && !st.ended)
            st.live.set_shard_version(k, version);
          answered(self, gen);
        },
        failed);
  for (size_t k = 0; k < st.ps.size() && !st.dense; ++k)
    self->request(st.ps.shards[k], timeout, counts_atom::value, tables_atom::value)
      .then(
        [=](std::vector<table_counts>& tables) {
          auto& st = self->state;
          if (gen == st.generation && !st.ended) {
            st.dense = tables.empty();  // (every shard of a sparse model holds every table)
            st.live.set_tables(k, std::move(tables));
          }
          answered(self, gen);
        },
        failed);
}

// The job's end: its files, and figures rebuilt from the whole trace.
void finish(watch_ptr self, job_result& r) {
  auto& st = self->state;
  st.ended = true;
  auto facts = st.live.facts();
  facts.state = to_string(r.state);
  facts.progress = 1;
  live_job last(facts);
  for (auto& ev : r.outcome.trace)
    last.add(ev);  // the samples from its "end" event, the run time from its latest
  if (!r.outcome.trace.empty())
    last.set_counts(last.samples(), r.outcome.worker_samples, 0, last.run_time());  // the run is over: no worker runs
  last.keep_rates(st.live);  // samples/s came from the counts read while it ran
  for (size_t k = 0; k < st.live.shard_versions().size(); ++k)
    last.set_shard_version(k, std::max(st.live.shard_versions()[k], r.outcome.final_model.version));
  for (size_t k = 0; k < st.live.tables().size(); ++k)  // as last read: the shards are gone
    last.set_tables(k, st.live.tables()[k]);
  if (!r.outcome.trace.empty() && !st.cfg.link.runs_dir.empty()) {
    auto dir = job_files_dir(st.cfg.link.runs_dir, st.cfg.id);
    try {
      write_run(dir, run_result_of(st.cfg.cfg, r));
      std::vector<std::string> files{"summary.json", "trace.jsonl"};
      report::write_text(dir + "/report.html", report::report_html({load_run(dir)}));  // the comparison page of one run
      files.push_back("report.html");
      last.set_files(std::move(files));
    } catch (const std::exception&) {
      // A folder it cannot write: the page shows no files, the head goes on.
    }
  }
  st.live = std::move(last);
  publish(self);
  self->quit();
}

watch_actor::behavior_type watch(watch_ptr self, watch_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.live = live_job(facts_of(self->state.cfg, {}));
  self->monitor(self->state.cfg.runner);  // a runner that ends without telling it (a crash) ends it too
  self->set_down_handler([=](caf::down_msg&) {
    if (!self->state.ended)
      publish(self);
    self->quit();
  });
  return {
    [=](start_atom, tracer_actor& tracer, coordinator_actor& coordinator, ps_group& ps,
        std::vector<std::string>& shard_hosts) {
      auto& st = self->state;
      bool first = !st.tracer;
      ++st.generation;
      st.pending = 0;
      st.tracer = std::move(tracer);
      st.coordinator = std::move(coordinator);
      st.ps = std::move(ps);
      st.next_event = 0;  // a restarted run's tracer holds the checkpoint's events, from the start
      st.live = live_job(facts_of(st.cfg, std::move(shard_hosts)));
      read(self);
      if (first)
        self->delayed_send(self, st.cfg.period, timeout_atom::value);
    },
    [=](timeout_atom) {
      read(self);
      self->delayed_send(self, self->state.cfg.period, timeout_atom::value);
    },
    [=](done_atom, job_result& r) { finish(self, r); },
  };
}

}  // namespace

watch_actor spawn_watch(caf::actor_system& sys, watch_config cfg) {
  return sys.spawn<caf::detached>(watch, std::move(cfg));
}

}  // namespace syncpoint::cluster
