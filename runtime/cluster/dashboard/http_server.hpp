// The dashboard's HTTP(S) server (Boost.Beast, on an io_context thread of its
// own): it carries requests to a dashboard_site and its answers back, within
// bounds a hostile client cannot move:
// - at most `max_connections` at once (lowered to half the process's file
//   limit, which the server first raises to its hard limit), and at most
//   `max_per_client` from one client address. At either cap, the oldest
//   connection (from that address, at its cap) that has not yet sent a whole
//   request is closed to make room: idle sockets cannot shut people out
//   (slowloris), not even through a reverse proxy, where everyone shares one
//   address. Only when every such connection has asked something is the new
//   one told 503 and closed (with TLS, closed);
// - a new connection must send its first request (its TLS handshake too)
//   within `header_timeout`; a kept-alive one its next request within
//   `idle_timeout`; an answer must be taken within `write_timeout`; else the
//   connection is closed;
// - a request's header at most 8 KiB (431) and its body 4 KiB (413);
//   keep-alive for up to 100 requests.
// With TLS it speaks HTTPS with the cluster's certificate and asks no
// certificate of the client (a browser has none).
//
//   http_server server(site, {"127.0.0.1", 8265});   // throws std::runtime_error if it cannot listen
//   server.port();
#pragma once

#include "runtime/cluster/net/tls_files.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace syncpoint::cluster {

class dashboard_site;

struct http_options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  ///< 0: a free one
  tls_files tls;      ///< enabled(): HTTPS
  size_t max_connections = 4096;
  size_t max_per_client = 32;
  size_t header_limit = 8 * 1024;
  size_t body_limit = 4 * 1024;
  std::chrono::milliseconds header_timeout{5'000};
  std::chrono::milliseconds idle_timeout{15'000};
  std::chrono::milliseconds write_timeout{30'000};
  std::function<void(const std::string&)> log;  ///< refused connections, errors (not each request)
};

class http_server {
 public:
  http_server(std::shared_ptr<dashboard_site> site, http_options opts);
  ~http_server();  // closes every connection and joins its thread
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  uint16_t port() const;

  /// The cap in force (max_connections, or less for the file limit).
  size_t max_connections() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace syncpoint::cluster
