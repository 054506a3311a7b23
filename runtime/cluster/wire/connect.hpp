// What every cluster process (head, node, submit, status) shares: the
// middleman settings and reaching the head with a deadline.
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/cluster/net/endpoint.hpp"
#include "runtime/cluster/net/tls_files.hpp"

#include <optional>

namespace syncpoint::cluster {

/// The words of an error: the message it carries, else CAF's rendering.
std::string error_words(caf::actor_system& sys, const caf::error& err);

/// "" if the three files are given and readable, else what is wrong (naming the file).
std::string check_tls(const tls_files& tls);

/// Loads the middleman (and, with `tls`, the OpenSSL manager) and registers
/// the cluster's messages. Heartbeats every second and a 3 s connection
/// timeout notice a silent peer within 4 s; the application identifier
/// carries the schema fingerprint, so CAF's handshake refuses a peer built
/// from another schema. The scheduler shares one queue over `threads`
/// threads (0: CAF's count), unless the command line says otherwise.
void configure_cluster(caf::actor_system_config& cfg, const tls_files& tls = {}, size_t threads = 0);

/// Publishes the head at `port` on `host` (with TLS when the OpenSSL manager is loaded).
caf::expected<uint16_t> publish_head(caf::actor_system& sys, const head_actor& head, uint16_t port,
                                     const std::string& host);

/// Connects to the head at `at` within `timeout` (over TLS when the OpenSSL
/// manager is loaded) and checks that what is published there has the
/// head_actor interface (as remote_actor<T> does, but bounded in time: CAF
/// 0.17's remote_actor waits forever on a silent port). The error says what
/// went wrong in words.
caf::expected<head_actor> connect_head(caf::actor_system& sys, const endpoint& at,
                                       caf::timespan timeout);

}  // namespace syncpoint::cluster
