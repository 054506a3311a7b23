// One submitted job, run on the head: once each chosen node has loaded the
// data (its clock starts then), it spawns the PS shards here or on their
// nodes, then the coordinator and evaluator here, asks each chosen node to
// spawn its workers, starts the coordinator, relays
// progress to the submitting client and the head, and sends the client the
// outcome. It stops the job when the head asks (stop_atom) or when the client
// goes away. With a dashboard, a watcher (job_watch.hpp) follows each run.
#pragma once

#include <syncpoint/dataset.hpp>
#include "runtime/job/checkpointing.hpp"
#include "runtime/cluster/dataplane/data_plane.hpp"
#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/cluster/jobs/watch.hpp"

#include <map>

#include <memory>

namespace syncpoint::cluster {

struct job_setup {
  uint64_t id = 0;
  job_plan plan;                           // made by the head from the submitted options
  std::shared_ptr<const dataset> test;     // the head's test set, for the evaluator
  std::vector<node_actor> nodes;           // per worker: the node that hosts it
  std::vector<std::string> node_names;     // per worker
  std::vector<std::string> node_tokens;    // per worker: what its node accepts jobs with
  // --ps-placement nodes: per shard (plan.shards() of them), the node that
  // hosts it; empty: the shards run here, on the head.
  std::vector<node_actor> shard_nodes;
  std::vector<std::string> shard_node_names;
  std::vector<std::string> shard_node_tokens;
  // --ps-replicas R: per shard, the nodes of its replicas (copy r at [r - 1]),
  // each on another host than the shard's other copies.
  std::vector<std::vector<node_actor>> replica_nodes;
  std::vector<std::vector<std::string>> replica_node_names;
  std::vector<std::vector<std::string>> replica_node_tokens;
  std::string head_token;                  // what the head accepts job updates with
  client_actor client;
  follower_actor follower;                 // hears every progress report, evaluation and phase (or none)
  head_actor head;
  caf::timespan spawn_timeout = std::chrono::seconds(60);
  std::shared_ptr<const resume_point> resume;  // continue from this checkpoint (checked by the head)
  // The data plane (runtime/cluster/dataplane/data_plane.hpp): the head's, for shards
  // here (null: no bulk channel), and each node's bulk endpoint by name.
  std::shared_ptr<data_plane> plane;
  std::map<std::string, std::string> node_bulk;
  dashboard_link dashboard;  // with a hub: a watcher follows the job for the head's dashboard
};

job_actor spawn_job(caf::actor_system& sys, job_setup setup);

}  // namespace syncpoint::cluster
