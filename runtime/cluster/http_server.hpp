// The dashboard's HTTP(S) server (Boost.Beast, on an io_context thread of its
// own): it carries requests to a dashboard_site and its answers back, within
// bounds a hostile client cannot move. At most `max_connections` at once (one
// more is told 503 and closed; with TLS, closed); a request's header at most 8 KiB (431) and its
// body 4 KiB (413); a request must arrive within `read_timeout` and an answer
// be taken within `write_timeout`, or the connection is closed; keep-alive for
// up to 100 requests. With TLS it speaks HTTPS with the cluster's certificate
// and asks no certificate of the client (a browser has none).
//
//   http_server server(site, {"127.0.0.1", 8265});   // throws std::runtime_error if it cannot listen
//   server.port();
#pragma once

#include "runtime/cluster/tls_files.hpp"

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
  size_t max_connections = 128;
  size_t header_limit = 8 * 1024;
  size_t body_limit = 4 * 1024;
  std::chrono::milliseconds read_timeout{10'000};
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

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace syncpoint::cluster
