#include "runtime/cluster/dashboard/dashboard_site.hpp"

#include "core/secret.hpp"

#include <algorithm>
#include <cctype>

namespace syncpoint::cluster {

namespace {

http_response text(int status, const std::string& body) {
  http_response r;
  r.status = status;
  r.body = status == 204 || status == 304 ? "" : body + "\n";  // these have no body (Beast refuses one)
  return r;
}

http_response json_body(const std::string& body) {
  http_response r;
  r.content_type = "application/json";
  r.body = body;
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

http_response html(int status, const std::string& body) {
  http_response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = body;
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// 303 See Other: the browser goes to `location` (a path of this site).
http_response redirect(const std::string& location) {
  auto r = html(303, "");
  r.headers.emplace_back("Location", location);
  return r;
}

// A job id: 1 to 19 digits (what fits a uint64), nothing else.
bool parse_id(const std::string& s, uint64_t& id) {
  if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  id = std::stoull(s);
  return true;
}

// x-www-form-urlencoded: '+' is a space, %XX a byte.
std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The value of `key` in "a=1&b=2" (decoded), or "".
std::string form_value(const std::string& form, const std::string& key) {
  size_t at = 0;
  while (at <= form.size()) {
    auto end = form.find('&', at);
    auto pair = form.substr(at, end == std::string::npos ? std::string::npos : end - at);
    auto eq = pair.find('=');
    if (pair.substr(0, eq) == key)
      return eq == std::string::npos ? "" : url_decode(pair.substr(eq + 1));
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return "";
}

// The value of cookie `name` in a Cookie header, or "".
std::string cookie_value(const std::string& header, const std::string& name) {
  size_t at = 0;
  while (at < header.size()) {
    auto end = header.find(';', at);
    auto part = header.substr(at, end == std::string::npos ? std::string::npos : end - at);
    auto first = part.find_first_not_of(' ');
    if (first != std::string::npos && part.compare(first, name.size() + 1, name + "=") == 0)
      return part.substr(first + name.size() + 1);
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return "";
}

// Where to go after the login: a path of this site only, in the characters
// its routes use (no "//host", no control characters that a browser drops
// or that would split the header): otherwise "/".
std::string local_path(const std::string& next) {
  bool plain = !next.empty() && next[0] == '/' && (next.size() < 2 || next[1] != '/') &&
               std::all_of(next.begin(), next.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '.' || c == '-';
               });
  return plain ? next : "/";
}

// The host of a Host header: "[::1]:8265" -> "::1", "a:8265" -> "a".
std::string host_of(const std::string& header) {
  if (!header.empty() && header[0] == '[')
    return header.substr(1, header.find(']') - 1);
  return header.substr(0, header.find(':'));
}

bool ip_literal(const std::string& host) {
  if (host.find(':') != std::string::npos)  // IPv6 (brackets already gone)
    return std::all_of(host.begin(), host.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; });
  int dots = 0;
  for (char c : host) {
    if (c == '.')
      ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  }
  return dots == 3;
}

// "/a/b/c" -> {"a", "b", "c"}.
std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t at = 1;
  while (at <= path.size()) {
    auto end = path.find('/', at);
    out.push_back(path.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return out;
}

const char* session_cookie = "syncpoint_session";

}  // namespace

dashboard_site::dashboard_site(std::shared_ptr<view_board> board, site_options opts)
    : board_(std::move(board)), opts_(std::move(opts)) {}

bool dashboard_site::known_host(const std::string& header) const {
  auto host = host_of(header);
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  if (host == "localhost" || ip_literal(host))
    return true;
  return std::any_of(opts_.host_names.begin(), opts_.host_names.end(), [&](std::string name) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return name == host;
  });
}

bool dashboard_site::authorized(const http_request& r) {
  if (opts_.token.empty())
    return true;
  const std::string bearer = "Bearer ";
  if (r.authorization.compare(0, bearer.size(), bearer) == 0 &&
      same_secret(r.authorization.substr(bearer.size()), opts_.token))
    return true;
  auto id = cookie_value(r.cookie, session_cookie);
  auto s = id.empty() ? sessions_.end() : sessions_.find(secret_digest(id));
  if (s == sessions_.end())
    return false;
  if (s->second < std::chrono::steady_clock::now()) {
    sessions_.erase(s);
    return false;
  }
  return true;
}

http_response dashboard_site::login(const http_request& r) {
  auto next = local_path(form_value(r.body, "next"));
  auto now = std::chrono::steady_clock::now();
  auto& failed = failed_logins_;
  failed.erase(std::remove_if(failed.begin(), failed.end(), [&](auto t) { return t < now - std::chrono::minutes(1); }),
               failed.end());
  if (failed.size() >= max_failed_logins) {  // guessing: wait a minute
    auto out = text(429, "too many wrong tokens in the last minute: try again later");
    out.headers.emplace_back("Retry-After", "60");
    return out;
  }
  if (!opts_.token.empty() && !same_secret(form_value(r.body, "token"), opts_.token)) {
    failed.push_back(now);
    return html(401, login_page(true, next));
  }
  auto out = redirect(next);
  if (opts_.token.empty())
    return out;  // nothing to log in to
  for (auto i = sessions_.begin(); i != sessions_.end();)  // the expired ones go first
    i = i->second < now ? sessions_.erase(i) : std::next(i);
  if (sessions_.size() >= max_sessions)  // then the one that expires soonest
    sessions_.erase(std::min_element(sessions_.begin(), sessions_.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; }));
  auto id = make_token();
  sessions_[secret_digest(id)] = now + session_life;
  out.headers.emplace_back("Set-Cookie", std::string(session_cookie) + "=" + id +
                                           "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
                                           std::to_string(std::chrono::seconds(session_life).count()) +
                                           (opts_.https ? "; Secure" : ""));
  return out;
}

http_response dashboard_site::handle(const http_request& r) {
  auto path = r.target.substr(0, r.target.find('?'));
  if (opts_.check_host && opts_.token.empty() && !known_host(r.host))
    return text(421, "this dashboard answers requests for its own addresses only (this one named '" + host_of(r.host) +
                       "'): give the head a --token to open it under other names");
  bool get = r.method == "GET" || r.method == "HEAD";
  if (path == "/login") {
    if (r.method == "POST")
      return login(r);
    if (!get)
      return text(405, "method not allowed");
    if (opts_.token.empty())
      return redirect("/");
    auto query = r.target.find('?') == std::string::npos ? "" : r.target.substr(r.target.find('?') + 1);
    return html(200, login_page(false, local_path(form_value(query, "next"))));
  }
  if (!get) {
    auto out = text(405, "method not allowed: the dashboard answers GET (and POST /login)");
    out.headers.emplace_back("Allow", "GET, HEAD");
    return out;
  }
  if (path == "/favicon.ico")
    return text(204, "");
  if (!authorized(r)) {
    bool page = path == "/" || (path.rfind("/jobs/", 0) == 0 && path.find("/files/") == std::string::npos);
    auto out = page ? html(401, login_page(false, path))
                    : text(401, "the dashboard needs the cluster's token: 'Authorization: Bearer TOKEN'");
    out.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"syncpoint\"");
    return out;
  }
  return route(path);
}

http_response dashboard_site::route(const std::string& path) {
  auto view = board_->get();
  if (path == "/")
    return html(200, cluster_page());
  if (path == "/metrics") {
    http_response r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = metrics_text(*view);
    return r;
  }
  if (path == "/api/cluster")
    return json_body(cluster_json(*view));
  auto parts = segments(path);
  uint64_t id = 0;
  auto no_job = [&](const std::string& what) { return text(404, "no job " + what + " on this head"); };
  if (parts.size() == 3 && parts[0] == "api" && parts[1] == "jobs") {
    if (!parse_id(parts[2], id) || !view->job(id))
      return no_job(parts[2]);
    return json_body(job_json(*view->job(id)));
  }
  if (parts.size() == 2 && parts[0] == "jobs") {
    if (!parse_id(parts[1], id) || !view->job(id))
      return no_job(parts[1]);
    return html(200, job_page());
  }
  if (parts.size() == 4 && parts[0] == "jobs" && parts[2] == "files") {
    const job_view* job = parse_id(parts[1], id) ? view->job(id) : nullptr;
    if (!job)
      return no_job(parts[1]);
    // Only a name the job's watcher wrote: nothing of a path reaches the disk.
    auto& names = job->live ? job->live->files() : std::vector<std::string>{};
    if (std::find(names.begin(), names.end(), parts[3]) == names.end())
      return text(404, "job " + parts[1] + " has no file '" + parts[3] + "' (its files come when it ends)");
    http_response r;
    r.file = job_files_dir(opts_.runs_dir, id) + "/" + parts[3];
    auto ext = parts[3].substr(parts[3].rfind('.') + 1);
    r.content_type = ext == "html" ? "text/html; charset=utf-8"
                     : ext == "jsonl" ? "application/x-ndjson"
                                      : "application/json";
    return r;
  }
  return text(404, "not found: the dashboard has /, /jobs/ID, /api/cluster, /api/jobs/ID and /metrics");
}

}  // namespace syncpoint::cluster
