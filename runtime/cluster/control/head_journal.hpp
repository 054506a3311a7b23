// The head's journal (head --state DIR; issue 59, "a head that comes back"):
// what a head restarted on the same folder needs to carry on. Its jobs (the
// plan, where each part was placed, the newest checkpoint, where the job
// stands) and its nodes. One file, DIR/head.journal, replaced whole on every
// change (runtime/records/durable_file.hpp): a crash leaves the old journal or
// the new one. A journal that is torn or corrupt (a disk's fault, a hand's),
// of another format, or written by a build whose messages differ is refused,
// naming the file, and left as it is.
//
//   auto j = read_journal(sys, "/var/lib/syncpoint").value_or(head_journal{});
//   j.jobs.push_back(journal_job{7, plan, token});
//   write_journal(sys, "/var/lib/syncpoint", j);
//
// Layout: the magic "syncpoint-head-journal", the format (uint32), the build's
// schema fingerprint (length-prefixed), the payload's length (uint64) and
// CRC-32, then the payload: the head_journal in CAF's binary encoding. Numbers
// in the host's byte order: a journal is read by the head of the machine
// that wrote it.
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/job/job_plan.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint::cluster {

inline constexpr uint32_t journal_format = 1;

struct journal_node {
  std::string name;
  int32_t slots = 0;
  std::vector<int32_t> gpus;
};

struct journal_job {
  uint64_t id = 0;
  job_plan plan;
  std::string stop_token;  // the submitter's, for its reattach (the journal is the owner's alone: 0600)
  job_stage state = job_stage::starting;
  std::string outcome;                    // a job that ended: its outcome in words
  std::vector<std::string> worker_nodes;  // by worker: its node's name
  std::vector<std::string> shard_nodes;   // by shard: its primary's node ("": the head)
  std::vector<std::vector<std::string>> replica_nodes;  // by shard, by replica (--ps-replicas)
  std::string checkpoint;  // the newest ("": none yet)
  uint32_t restarts = 0;
};

struct head_journal {
  uint64_t epoch = 0;     // one more at every start of a head on the folder
  uint64_t next_job = 1;  // the id the next submitted job gets
  std::vector<journal_node> nodes;
  std::vector<journal_job> jobs;
};

/// DIR/head.journal
std::string journal_file(const std::string& dir);

/// Replaces DIR's journal with `j` (a DIR it creates is 0700, the file always
/// 0600: the journal holds stop tokens). Throws config_error naming the file when it cannot (the old
/// journal then stays as it was).
void write_journal(caf::actor_system& sys, const std::string& dir, const head_journal& j);

/// DIR's journal, or nothing when DIR holds none. Throws config_error naming
/// the file and what is wrong: not a head journal, torn, corrupt, of another
/// format, or of a build whose messages differ.
std::optional<head_journal> read_journal(caf::actor_system& sys, const std::string& dir);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, journal_node& x) {
  return f(caf::meta::type_name("journal_node"), x.name, x.slots, x.gpus);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, journal_job& x) {
  return f(caf::meta::type_name("journal_job"), x.id, x.plan, x.stop_token, x.state, x.outcome, x.worker_nodes,
           x.shard_nodes, x.replica_nodes, x.checkpoint, x.restarts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, head_journal& x) {
  return f(caf::meta::type_name("head_journal"), x.epoch, x.next_job, x.nodes, x.jobs);
}

}  // namespace syncpoint::cluster
