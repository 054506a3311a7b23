// What the head's dashboard answers, request by request: the routes, the
// token check and the login sessions, over the latest view on the board. No
// sockets here (http_server.hpp carries the bytes), so every answer can be
// tested as a function call.
//
//   GET  /                       the cluster page        GET /api/cluster       its data (JSON)
//   GET  /jobs/ID                one job's page          GET /api/jobs/ID       its data (JSON)
//   GET  /metrics                Prometheus text         GET /jobs/ID/files/F   a finished job's file
//   GET  /login, POST /login     the token form, and the session cookie it sets
//
//   dashboard_site site(board, token, runs_dir);
//   http_response r = site.handle({"GET", "/api/cluster", "Bearer " + token});
#pragma once

#include "runtime/cluster/dashboard/dashboard.hpp"

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint::cluster {

struct http_request {
  std::string method;         ///< GET, HEAD, POST, ...
  std::string target;         ///< path and query, as sent
  std::string authorization;  ///< the Authorization header ("" when none)
  std::string cookie;         ///< the Cookie header
  std::string content_type;
  std::string body;
  std::string host;           ///< the Host header
};

struct http_response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string file;  ///< when set: send this file's bytes instead of `body`
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Who the site is, beyond its data.
struct site_options {
  std::string token;     ///< "": no login (and then only Host names below are answered)
  std::string runs_dir;  ///< where finished jobs' files are
  bool https = false;    ///< the session cookie is then Secure
  /// A dashboard on loopback without a token answers only requests that
  /// name it by an IP address, "localhost" or one of `host_names`: a web
  /// page elsewhere cannot reach it through a name of its own (DNS
  /// rebinding). With a token, the token is the check; on another address
  /// without one, anyone who reaches it may read it anyway.
  bool check_host = false;
  std::vector<std::string> host_names;
};

class dashboard_site {
 public:
  dashboard_site(std::shared_ptr<view_board> board, site_options opts);

  /// The answer to `r` (one thread at a time).
  http_response handle(const http_request& r);

  static constexpr size_t max_sessions = 1000;
  static constexpr std::chrono::hours session_life{12};
  /// Wrong tokens given to /login in the last minute before it answers 429.
  static constexpr size_t max_failed_logins = 20;

 private:
  bool authorized(const http_request& r);
  bool known_host(const std::string& host) const;
  http_response login(const http_request& r);
  http_response route(const std::string& path);

  std::shared_ptr<view_board> board_;
  site_options opts_;
  // SHA-256 of a session's id -> its expiry: a lookup compares no byte of a live id with what a client sent.
  std::map<std::string, std::chrono::steady_clock::time_point> sessions_;
  std::vector<std::chrono::steady_clock::time_point> failed_logins_;       // in the last minute
};

/// The pages, each one self-contained HTML document (pages/).
const std::string& cluster_page();
const std::string& job_page();
/// The token form; `failed`: the token given was wrong; `next`: where to go after.
std::string login_page(bool failed, const std::string& next);

}  // namespace syncpoint::cluster
