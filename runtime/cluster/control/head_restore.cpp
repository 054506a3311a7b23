// The head's journal kept as the cluster changes, and the jobs it lists
// carried on by a head restarted on the same folder (head --state;
// docs/cluster.md, "The head dies unexpectedly").
//
// Every job's coordinator, evaluator and tracer live on the head, so none
// survives it: a job that was running goes on from its newest checkpoint, as
// a --resume submission would, once the nodes that hosted it are back (or at
// the rejoin deadline, on the nodes there are). A job with no checkpoint
// cannot go on, and its outcome says so.
#include "runtime/cluster/control/head_state.hpp"

#include "runtime/cluster/wire/connect.hpp"
#include "runtime/records/checkpoint_file.hpp"

#include <algorithm>
#include <set>

namespace syncpoint::cluster::head_detail {

namespace {

// How often in a row a job is carried on by a head that came back with no
// new checkpoint in between (as job_restart.cpp restarts a job for lost
// shards): a job that brings the head down with it is not carried on
// forever, one whose head is lost now and then, each time after new
// checkpoints, is.
constexpr uint32_t max_restores = 3;

journal_job* journaled(head_ptr self, uint64_t id) {
  if (!self->state.journal)
    return nullptr;
  for (auto& j : self->state.journal->jobs)
    if (j.id == id)
      return &j;
  return nullptr;
}

// The nodes a restored job waits for: those that hosted its workers and shards.
std::set<std::string> nodes_of(const journal_job& j) {
  std::set<std::string> out(j.worker_nodes.begin(), j.worker_nodes.end());
  out.insert(j.shard_nodes.begin(), j.shard_nodes.end());
  for (auto& copies : j.replica_nodes)
    out.insert(copies.begin(), copies.end());
  out.erase("");
  out.erase("head");
  return out;
}

}  // namespace

void save_journal(head_ptr self) {
  auto& st = self->state;
  if (!st.journal)
    return;
  st.journal->next_job = st.next_job;
  try {
    write_journal(self->system(), st.cfg.state_dir, *st.journal);
  } catch (const std::exception& e) {
    log(self, std::string("ERROR: ") + e.what() + " (the jobs go on; a restarted head would not know of this change)");
  }
}

void journal_nodes(head_ptr self) {
  auto& st = self->state;
  if (!st.journal)
    return;
  st.journal->nodes.clear();
  for (auto& n : st.nodes)
    st.journal->nodes.push_back({n.status.name, n.status.slots, n.status.gpus});
  save_journal(self);
}

void journal_started(head_ptr self, uint64_t id, const job_setup& setup, const std::string& stop_token,
                     const restoring_job* restored) {
  auto& st = self->state;
  if (!st.journal)
    return;
  auto* j = journaled(self, id);
  if (!j) {
    j = &st.journal->jobs.emplace_back();
    j->id = id;
  }
  j->plan = setup.plan;
  j->stop_token = stop_token;
  j->state = job_stage::starting;
  j->outcome.clear();
  j->worker_nodes = setup.node_names;
  j->shard_nodes = setup.shard_node_names;
  j->replica_nodes = setup.replica_node_names;
  j->checkpoint = setup.resume ? setup.resume->file : "";
  j->restarts = restored ? restored->journal.restarts + 1 : 0;
  save_journal(self);
}

void journal_state(head_ptr self, uint64_t id, job_stage state, const std::string* outcome) {
  auto* j = journaled(self, id);
  if (!j || (j->state == state && (!outcome || *outcome == j->outcome)))
    return;
  if (is_final(j->state) && !is_final(state))  // an outcome, once known, stays
    return;
  j->state = state;
  if (outcome)
    j->outcome = *outcome;
  save_journal(self);
}

void restore_jobs(head_ptr self) {
  auto& st = self->state;
  if (!st.cfg.journal)
    return;
  st.journal = std::move(st.cfg.journal);
  st.cfg.journal.reset();
  st.next_job = std::max<uint64_t>(st.journal->next_job, 1);
  std::string waited;
  for (auto& n : st.journal->nodes)
    waited += (waited.empty() ? "" : ", ") + n.name;
  for (auto& j : st.journal->jobs) {
    if (is_final(j.state))
      continue;
    auto& dir = j.plan.cfg.checkpoint_dir;
    auto newest = dir.empty() ? std::string() : newest_checkpoint(dir);
    if (!newest.empty() && newest != j.checkpoint)
      j.restarts = 0;  // a checkpoint since it last went on: the count starts again
    if (j.restarts >= max_restores) {
      j.state = job_stage::failed;
      j.outcome = "the head was lost " + std::to_string(j.restarts + 1) +
                  " times in a row while the job ran, with no new checkpoint in between: it is not carried on again";
      log(self, "job " + std::to_string(j.id) + " cannot go on: " + j.outcome);
      continue;
    }
    if (newest.empty()) {
      j.state = job_stage::failed;
      j.outcome = "the head was lost (it came back at start " + std::to_string(st.journal->epoch) +
                  ") before the job had a checkpoint to go on from" +
                  (dir.empty() ? std::string(" (it took none: --checkpoint-every)") : " in " + dir);
      log(self, "job " + std::to_string(j.id) + " cannot go on: " + j.outcome);
      continue;
    }
    j.checkpoint = newest;
    auto relay = spawn_submitter_relay(self->system(), {j.id, {}, head_actor{self}, st.cfg.control_token});
    self->monitor(relay);
    std::string nodes;
    for (auto& name : nodes_of(j))
      nodes += (nodes.empty() ? "" : ", ") + name;
    log(self, "job " + std::to_string(j.id) + " (" + j.plan.cfg.protocol + ") goes on from " + newest +
                " once its nodes are back (" + (nodes.empty() ? std::string("none: the head's") : nodes) + ")");
    st.restoring.emplace(j.id, restoring_job{j, relay});
  }
  if (!st.restoring.empty())  // (the first job's: a head runs one job at a time, most often)
    preload_data(self, st.restoring.begin()->second.journal.plan.cfg);
  st.journal->nodes.clear();  // they register again
  save_journal(self);
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(st.cfg.rejoin_wait);
  st.rejoin_deadline_ms = unix_ms() + wait.count();
  if (!st.restoring.empty()) {
    log(self, "the journal's nodes (" + (waited.empty() ? std::string("none") : waited) + ") have " +
                std::to_string(wait.count() / 1000) + " s to come back");
    // At the deadline the jobs go on with the nodes there are (a heartbeat to itself checks).
    self->delayed_send(self, st.cfg.rejoin_wait + std::chrono::milliseconds(10), heartbeat_atom::value,
                       std::string());
  }
}

void try_restore(head_ptr self) {
  auto& st = self->state;
  if (st.restoring.empty() || st.shutting_down)
    return;
  bool late = unix_ms() >= st.rejoin_deadline_ms;
  std::vector<uint64_t> ready;
  for (auto& [id, r] : st.restoring) {
    auto needed = nodes_of(r.journal);
    bool back = std::all_of(needed.begin(), needed.end(), [&](auto& name) { return find_node(self, name); });
    if (back || late)
      ready.push_back(id);
  }
  for (auto id : ready) {
    auto r = std::move(st.restoring.at(id));
    st.restoring.erase(id);
    auto cfg = r.journal.plan.cfg;
    cfg.resume_dir = cfg.checkpoint_dir;  // as `submit --resume DIR` would
    auto started = start_job(self, cfg, client_actor{}, follower_actor{}, &r);
    if (started) {
      log(self, "job " + std::to_string(id) + " goes on from its newest checkpoint (" + r.journal.checkpoint + ")");
      continue;
    }
    auto why = "the head came back but the job could not go on from " + r.journal.checkpoint + ": " +
               error_words(self->system(), started.error());
    log(self, "job " + std::to_string(id) + " failed: " + why);
    end_unrestored(self, id, r.relay, job_stage::failed, why);
  }
}

void end_unrestored(head_ptr self, uint64_t id, const submitter_relay_actor& relay, job_stage state,
                    const std::string& why) {
  journal_state(self, id, state, &why);
  self->demonitor(relay.address());  // its end is no longer news
  self->send(relay, finished_atom::value, job_result{state, why, 0, {}});
  self->send(relay, leave_atom::value);
}

caf::result<bool> on_reattach(head_ptr self, uint64_t id, const std::string& token, client_actor& client) {
  auto& st = self->state;
  auto refuse = [&] {
    log(self, "refused a reattach to job " + std::to_string(id) + ": not its submitter's token");
    return make_error(sp_error::not_a_member, "the head has no job " + std::to_string(id) +
                                                " submitted with that token (only its submitter reattaches)");
  };
  if (!client)
    return make_error(sp_error::bad_input, "a reattach needs a client to report to");
  if (auto i = st.restoring.find(id); i != st.restoring.end()) {
    if (!same_secret(token, i->second.journal.stop_token))
      return refuse();
    self->send(i->second.relay, reattach_atom::value, client);
    log(self, "job " + std::to_string(id) + ": its submitter reattached (the job waits for its nodes)");
    return true;
  }
  if (auto i = st.jobs.find(id); i != st.jobs.end() && i->second.relay) {
    if (!same_secret(token, i->second.stop_token))
      return refuse();
    self->send(i->second.relay, reattach_atom::value, client);
    log(self, job_name(id, i->second) + ": its submitter reattached");
    return true;
  }
  auto* j = journaled(self, id);
  if (!j || !same_secret(token, j->stop_token))
    return refuse();
  if (!is_final(j->state))  // its relay handed the outcome over, and the state is on its way
    return make_error(sp_error::not_now, "job " + std::to_string(id) + " is ending: reattach again");
  self->send(client, finished_atom::value, job_result{j->state, j->outcome, 0, {}});  // the outcome in words only
  return true;
}

}  // namespace syncpoint::cluster::head_detail
