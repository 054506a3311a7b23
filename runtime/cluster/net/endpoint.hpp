// Where a process of the cluster listens: a host and a port, read from
// "HOST:PORT", and which of this machine's addresses reaches a host.
//
//   auto at = parse_endpoint("[::1]:4242");         // {"::1", 4242}
//   local_address_towards(at->host, at->port);      // "::1"
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace syncpoint::cluster {

struct endpoint {
  std::string host;
  uint16_t port = 0;
};

/// Parses "HOST:PORT" (an IPv6 host in brackets: "[::1]:4242").
std::optional<endpoint> parse_endpoint(const std::string& s);

/// The address of this machine's interface that reaches `host` (an address
/// or a name), as the routing table says (no packet is sent); "" if none does.
std::string local_address_towards(const std::string& host, uint16_t port);

/// Whether `host` names this machine's loopback (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

/// Whether every address `host` resolves to is a loopback one (a name such as
/// a Slurm node's that /etc/hosts maps to 127.0.0.1); false if it does not resolve.
bool resolves_to_loopback(const std::string& host);

}  // namespace syncpoint::cluster
