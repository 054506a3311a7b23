// Submitting a job to the head and following it (the library's submit(),
// <syncpoint/cluster.hpp>, and `syncpoint submit`), and the wait for a job's
// or sweep's result that `syncpoint sweep --head` shares.
#pragma once

#include "runtime/cluster/interfaces.hpp"

#include <caf/scoped_actor.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace syncpoint::cluster {

/// What await_result saw: the result the client handed on, a lost head, or neither in time.
struct awaited_result {
  bool got = false, lost = false;
  job_result result;
};

/// Waits until `self` receives the job_result its client hands on, the head
/// goes away (`self` monitors it) or `limit` passes. Polls `stop_when` about
/// every 100 ms: a non-empty reason asks the head to stop job (or sweep) `id`
/// with its stop token; `say` hears it when the head does not.
awaited_result await_result(caf::scoped_actor& self, const head_actor& head, uint64_t id,
                            const std::string& stop_token, const std::function<std::string()>& stop_when,
                            std::chrono::seconds limit, const std::function<void(const std::string&)>& say);

/// How long to wait for a job's result: twice its time limit and 10 minutes, or 30 days.
std::chrono::seconds result_deadline(const job_config& cfg);

}  // namespace syncpoint::cluster
