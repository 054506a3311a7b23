// What the head's dashboard answers (runtime/cluster/dashboard/dashboard_site.hpp), as
// function calls: the routes, the token by bearer header or login cookie,
// and the refusals (a job that does not exist, a path that is no route, a
// file name the job did not write, another method).
#include "runtime/cluster/dashboard/dashboard_site.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;
using namespace syncpoint::cluster;

namespace {

std::shared_ptr<view_board> board_with_job() {
  auto live = std::make_shared<live_job>(job_facts{3, "bsp", 2, "done", 1, {"head"}, 0.1});
  live->set_files({"summary.json", "report.html"});
  auto v = std::make_shared<dashboard_view>();
  v->nodes = {{"a", "127.0.0.1:1", 2, 0, 0, 0}};
  v->jobs = {{{3, "bsp", 2, 1, 0.9, job_stage::done, {"head"}}, false, live},
             {{4, "bsp", 2, 0.5, 0.8, job_stage::running, {"head"}}, false, nullptr}};
  auto board = std::make_shared<view_board>();
  board->put(v);
  return board;
}

http_response get(dashboard_site& site, const std::string& target, const std::string& auth = "",
                  const std::string& cookie = "") {
  return site.handle({"GET", target, auth, cookie, "", "", "127.0.0.1:8265"});
}

std::string header(const http_response& r, const std::string& name) {
  for (auto& [k, v] : r.headers)
    if (k == name)
      return v;
  return "";
}

}  // namespace

TEST_CASE("dashboard site: the routes answer the view's data, and refuse what is no route") {
  dashboard_site site(board_with_job(), {"", "/runs"});
  auto page = get(site, "/");
  CHECK(page.status == 200);
  CHECK(page.content_type.rfind("text/html", 0) == 0);
  CHECK(page.body.find("/*SCRIPT*/") == std::string::npos);  // the shared script is in
  CHECK(page.body.find("function poll(") != std::string::npos);
  CHECK(page.body.find("<script src") == std::string::npos);  // self-contained
  CHECK(get(site, "/?refresh=1").status == 200);
  auto api = get(site, "/api/cluster");
  CHECK(api.status == 200);
  CHECK(api.content_type == "application/json");
  CHECK(api.body.find("\"name\": \"a\"") != std::string::npos);
  CHECK(get(site, "/api/jobs/3").body.find("\"files\": [\"summary.json\", \"report.html\"]") != std::string::npos);
  CHECK(get(site, "/api/jobs/4").body.find("\"live\": null") != std::string::npos);
  CHECK(get(site, "/jobs/3").status == 200);
  auto metrics = get(site, "/metrics");
  CHECK(metrics.content_type.rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(metrics.body.find("syncpoint_job_info{job=\"3\"") != std::string::npos);
  auto file = get(site, "/jobs/3/files/report.html");
  CHECK(file.status == 200);
  CHECK(file.file == "/runs/job-3/report.html");
  CHECK(file.content_type.rfind("text/html", 0) == 0);
  for (auto* bad : {"/api/jobs/99", "/jobs/99", "/api/jobs/abc", "/api/jobs/-1", "/api/jobs/99999999999999999999",
                    "/jobs/3/files/trace.jsonl", "/jobs/3/files/../../etc/passwd", "/jobs/3/files/..%2fsummary.json",
                    "/jobs/4/files/summary.json", "/%2e%2e/etc/passwd", "/../etc/passwd", "/jobs/3/", "/api",
                    "/metrics/x", "/jobs/3/files/summary.json/x"}) {
    auto r = get(site, bad);
    CHECK_MESSAGE(r.status == 404, bad);
    CHECK_MESSAGE(r.file.empty(), bad);
  }
  auto put = site.handle({"PUT", "/api/cluster", "", "", "", "x"});
  CHECK(put.status == 405);
  CHECK(header(put, "Allow") == "GET, HEAD");
  CHECK(site.handle({"HEAD", "/metrics", "", "", "", ""}).status == 200);
  CHECK(get(site, "/favicon.ico").status == 204);
  CHECK(get(site, "/login").status == 303);  // no token: nothing to log in to
}

TEST_CASE("dashboard site: with a token, a bearer header or the login's cookie, nothing else") {
  dashboard_site site(board_with_job(), {"s3cret", "/runs"});
  auto refused = get(site, "/api/cluster");
  CHECK(refused.status == 401);
  CHECK(header(refused, "WWW-Authenticate") == "Bearer realm=\"syncpoint\"");
  CHECK(get(site, "/metrics", "Bearer wrong").status == 401);
  CHECK(get(site, "/metrics", "Basic czNjcmV0").status == 401);
  CHECK(get(site, "/jobs/3/files/report.html").status == 401);
  CHECK(get(site, "/metrics", "Bearer s3cret").status == 200);
  // A page without the token is the login form (401), which comes back to it.
  auto page = get(site, "/jobs/3");
  CHECK(page.status == 401);
  CHECK(page.body.find("name=\"token\"") != std::string::npos);
  CHECK(page.body.find("value=\"/jobs/3\"") != std::string::npos);
  // A wrong token: the form again, saying so; no cookie.
  auto wrong = site.handle({"POST", "/login", "", "", "application/x-www-form-urlencoded", "token=nope&next=%2Fjobs%2F3"});
  CHECK(wrong.status == 401);
  CHECK(wrong.body.find("not the cluster's token") != std::string::npos);
  CHECK(header(wrong, "Set-Cookie").empty());
  // The right one: a session cookie (HttpOnly, SameSite=Strict) and back to the page.
  auto ok = site.handle({"POST", "/login", "", "", "application/x-www-form-urlencoded", "token=s3cret&next=%2Fjobs%2F3"});
  CHECK(ok.status == 303);
  CHECK(header(ok, "Location") == "/jobs/3");
  auto cookie = header(ok, "Set-Cookie");
  CHECK(cookie.find("HttpOnly") != std::string::npos);
  CHECK(cookie.find("SameSite=Strict") != std::string::npos);
  auto session = cookie.substr(0, cookie.find(';'));
  CHECK(session.find("s3cret") == std::string::npos);  // a session id, not the token
  CHECK(get(site, "/api/cluster", "", "other=1; " + session).status == 200);
  CHECK(get(site, "/api/cluster", "", "syncpoint_session=forged").status == 401);
  // "next" stays on this site: never another host, nothing a browser drops, no header of its own.
  for (auto* elsewhere : {"https%3A%2F%2Fevil.example", "%2F%2Fevil.example", "%2F%5Cevil.example",
                          "%2F%09%2Fevil.example", "%2Fjobs%0D%0ASet-Cookie:%20x=1", "%2F%20%2Fevil.example"}) {
    auto r = site.handle({"POST", "/login", "", "", "", std::string("token=s3cret&next=") + elsewhere});
    CHECK_MESSAGE(header(r, "Location") == "/", elsewhere);
  }
  // The form's "next" is an attribute: quotes in it cannot end it.
  auto tricky = get(site, "/login?next=%2F%22%3E%3Cscript%3E");
  CHECK(tricky.body.find("\"><script>") == std::string::npos);
}

TEST_CASE("dashboard site: at most 1000 login sessions, the oldest going first") {
  dashboard_site site(board_with_job(), {"t", "/runs"});
  std::string first;
  for (size_t i = 0; i < dashboard_site::max_sessions + 1; ++i) {
    auto r = site.handle({"POST", "/login", "", "", "", "token=t"});
    auto c = header(r, "Set-Cookie");
    if (i == 0)
      first = c.substr(0, c.find(';'));
  }
  CHECK(get(site, "/metrics", "", first).status == 401);
}

TEST_CASE("dashboard site: wrong tokens are guessed 20 a minute at most, and a favicon has no body") {
  dashboard_site site(board_with_job(), {"t", "/runs"});
  for (size_t i = 0; i < dashboard_site::max_failed_logins; ++i)
    CHECK(site.handle({"POST", "/login", "", "", "", "token=guess" + std::to_string(i)}).status == 401);
  auto blocked = site.handle({"POST", "/login", "", "", "", "token=t"});
  CHECK(blocked.status == 429);
  CHECK(header(blocked, "Retry-After") == "60");
  auto icon = get(site, "/favicon.ico");
  CHECK(icon.status == 204);
  CHECK(icon.body.empty());  // a 204 with a body is refused by Beast (it threw, and ended the head)
}

TEST_CASE("dashboard site: on loopback without a token, only its own names are answered (no DNS rebinding)") {
  site_options opts{"", "/runs"};
  opts.check_host = true;
  opts.host_names = {"headbox"};
  dashboard_site site(board_with_job(), opts);
  for (auto* host : {"127.0.0.1:8265", "localhost:8265", "LOCALHOST", "[::1]:8265", "headbox:8265", "10.1.2.3"})
    CHECK_MESSAGE(site.handle({"GET", "/api/cluster", "", "", "", "", host}).status == 200, host);
  for (auto* host : {"evil.example:8265", "", "127.0.0.1.evil.example", "headbox.evil.example"})
    CHECK_MESSAGE(site.handle({"GET", "/api/cluster", "", "", "", "", host}).status == 421, host);
  dashboard_site guarded(board_with_job(), {"tok", "/runs", false, true, {}});  // with a token, the token decides
  CHECK(guarded.handle({"GET", "/api/cluster", "Bearer tok", "", "", "", "evil.example"}).status == 200);
}
