// Submitting a job to the head and following it (the library's submit(),
// <syncpoint/cluster.hpp>, and `syncpoint submit`), and the wait for a job's
// or sweep's result that `syncpoint sweep --head` shares.
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/cluster/net/endpoint.hpp"

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

/// A lost head that keeps a journal, waited for at `at` for `wait`: once a
/// head answers there and takes job `id` back, the job reports to `client`.
/// A head of the `lost` one's process (a connection that broke while it
/// lived, or the middleman's proxy of it) is asked briefly. The error says why
/// not (the head refused, or never came back, or `stop_when` gave a reason
/// meanwhile).
caf::expected<head_actor> reattach(caf::scoped_actor& self, const endpoint& at, uint64_t id,
                                   const std::string& stop_token, const client_actor& client,
                                   const caf::node_id& lost, std::chrono::seconds wait,
                                   const std::function<std::string()>& stop_when);

/// How long to wait for a job's result: twice its time limit and 10 minutes, or 30 days.
std::chrono::seconds result_deadline(const job_config& cfg);

}  // namespace syncpoint::cluster
