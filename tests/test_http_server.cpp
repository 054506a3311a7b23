// The dashboard's HTTP server (runtime/cluster/dashboard/http_server.hpp) in this
// process, with small limits so that each one is reached on purpose: the
// connection caps (total and per client), idle connections (before the first
// request and between requests), eviction at the cap, keep-alive, HEAD.
#include "runtime/cluster/dashboard/dashboard_site.hpp"
#include "runtime/cluster/net/file_limit.hpp"
#include "runtime/cluster/dashboard/http_server.hpp"
#include "tests/http_client.hpp"

#include <doctest/doctest.h>


#include <thread>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace syncpoint::testing;

namespace {

std::shared_ptr<dashboard_site> empty_site(const std::string& token = "") {
  return std::make_shared<dashboard_site>(std::make_shared<view_board>(), site_options{token, "/nowhere"});
}

// Whether the server has closed `fd` (it reads end of file; nothing was sent
// on it, so nothing else can come). Does not wait.
bool closed_by_server(int fd) {
  char byte;
  return ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
}

// Waits (the deadline is for a hang) until the server closes `fd`; how long it took.
std::chrono::milliseconds await_close(int fd) {
  auto t0 = std::chrono::steady_clock::now();
  char byte;
  auto n = ::recv(fd, &byte, 1, 0);  // blocks up to the socket's read deadline
  CHECK_MESSAGE(n == 0, "the server did not close the connection (recv " << n << ")");
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
}

}  // namespace

TEST_CASE("http server: one connection over the cap is told 503 at once, and a freed place is taken again") {
  http_options opts;
  opts.max_connections = 2;
  opts.idle_timeout = std::chrono::minutes(2);  // the idle ones stay for the whole test
  http_server server(empty_site(), opts);
  int port = server.port();
  int idle1 = http_connect(port), idle2 = http_connect(port);
  REQUIRE(idle1 >= 0);
  REQUIRE(idle2 >= 0);
  // Both idle connections are sessions once a request on each is answered.
  http_send(idle1, "GET /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  http_send(idle2, "GET /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  char buf[4096];
  REQUIRE(::recv(idle1, buf, sizeof buf, 0) > 0);  // kept alive: they stay open
  REQUIRE(::recv(idle2, buf, sizeof buf, 0) > 0);
  auto third = http_get(port, "/api/cluster");
  CHECK(third.status == 503);
  CHECK(third.body.find("too many connections") != std::string::npos);
  ::close(idle1);
  // The server sees the close, and the place is free again: the event is a 200.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int status = 0;
  while ((status = http_get(port, "/api/cluster").status) == 503 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(status == 200);
  ::close(idle2);
}

TEST_CASE("http server: a client that does not send its request in time is closed while others are served") {
  http_options opts;
  opts.header_timeout = std::chrono::milliseconds(300);
  http_server server(empty_site(), opts);
  auto t0 = std::chrono::steady_clock::now();
  int silent = http_connect(server.port());  // sends nothing at all
  int slow = http_connect(server.port());    // half a request head, then nothing
  REQUIRE(silent >= 0);
  REQUIRE(slow >= 0);
  http_send(slow, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ");
  CHECK(http_get(server.port(), "/metrics").status == 200);
  await_close(silent);
  await_close(slow);  // closed by the server, with nothing sent
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(300));  // not before its time
  ::close(silent);
  ::close(slow);
}

TEST_CASE("http server: a kept-alive connection is closed once it has been idle for idle_timeout") {
  http_options opts;
  opts.idle_timeout = std::chrono::milliseconds(400);
  http_server server(empty_site(), opts);
  int fd = http_connect(server.port());
  REQUIRE(fd >= 0);
  http_send(fd, "GET /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  char buf[4096];
  REQUIRE(::recv(fd, buf, sizeof buf, 0) > 0);  // answered, and kept alive
  auto idle = await_close(fd);
  CHECK(idle >= std::chrono::milliseconds(350));  // (the answer's last bytes came a little after the timer started)
  ::close(fd);
}

TEST_CASE("http server: one client address holds at most max_per_client connections that have asked something, "
          "other addresses are served") {
  http_options opts;
  opts.max_per_client = 3;
  opts.idle_timeout = std::chrono::minutes(2);  // the kept-alive ones stay for the whole test
  http_server server(empty_site(), opts);
  int port = server.port();
  std::vector<int> heard;
  char buf[4096];
  for (int i = 0; i < 3; ++i) {
    heard.push_back(http_connect(port, std::chrono::seconds(120), "127.0.0.2"));
    REQUIRE(heard.back() >= 0);
    http_send(heard.back(), "GET /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    REQUIRE(::recv(heard.back(), buf, sizeof buf, 0) > 0);  // answered, kept alive: not to be evicted
  }
  int fourth = http_connect(port, std::chrono::seconds(120), "127.0.0.2");
  REQUIRE(fourth >= 0);
  http_send(fourth, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto refused = parse_reply(http_read_all(fourth));
  CHECK(refused.status == 503);
  CHECK(refused.body == "too many connections to the dashboard from your address\n");
  CHECK(http_get(port, "/metrics").status == 200);  // from 127.0.0.1
  for (int fd : heard) {
    CHECK_FALSE(closed_by_server(fd));  // the first three keep their places
    ::close(fd);
  }
  ::close(fourth);
}

TEST_CASE("http server: at an address's cap, that address's oldest silent connection makes room, not another's") {
  http_options opts;
  opts.max_per_client = 3;
  opts.header_timeout = std::chrono::minutes(2);  // the silent ones stay unless evicted
  http_server server(empty_site(), opts);
  int port = server.port();
  int elsewhere = http_connect(port, std::chrono::seconds(120), "127.0.0.5");  // older than all, another address
  REQUIRE(elsewhere >= 0);
  std::vector<int> silent;
  for (int i = 0; i < 3; ++i) {
    silent.push_back(http_connect(port, std::chrono::seconds(120), "127.0.0.2"));
    REQUIRE(silent.back() >= 0);
  }
  // The fourth from 127.0.0.2 is served, in the place of 127.0.0.2's oldest silent one.
  CHECK(http_get(port, "/metrics", {}, "127.0.0.2").status == 200);
  await_close(silent[0]);
  CHECK_FALSE(closed_by_server(elsewhere));
  for (int fd : {silent[1], silent[2], elsewhere}) {
    http_send(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    CHECK(parse_reply(http_read_all(fd)).status == 200);
  }
  for (int fd : silent)
    ::close(fd);
  ::close(elsewhere);
}

TEST_CASE("http server: with 1,000 idle connections from the client's own address, the page and /metrics answer 200") {
  raise_file_limit();  // the clients' 1,000 sockets and the server's
  http_options opts;
  opts.header_timeout = std::chrono::minutes(2);  // the idle ones stay unless evicted
  http_server server(empty_site("s3cret"), opts);
  int port = server.port();
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    idle.push_back(http_connect(port, std::chrono::seconds(120), "127.0.0.1"));
    REQUIRE(idle.back() >= 0);
  }
  auto page = http_get(port, "/", {"Authorization: Bearer s3cret"});
  CHECK(page.status == 200);
  CHECK(page.body.find("<html") != std::string::npos);
  CHECK(http_get(port, "/metrics", {"Authorization: Bearer s3cret"}).status == 200);
  // The newest of them keep their places: each evicted one was older than them.
  for (size_t i = idle.size() - opts.max_per_client + 2; i < idle.size(); ++i)
    CHECK_FALSE(closed_by_server(idle[i]));
  for (int fd : idle)
    ::close(fd);
}

TEST_CASE("http server: at the cap, the oldest connection that has asked nothing makes room for a new one") {
  http_options opts;
  opts.max_connections = 3;
  opts.header_timeout = std::chrono::minutes(2);
  http_server server(empty_site(), opts);
  int port = server.port();
  int oldest = http_connect(port), second = http_connect(port), third = http_connect(port);
  REQUIRE(oldest >= 0);
  REQUIRE(second >= 0);
  REQUIRE(third >= 0);
  CHECK(http_get(port, "/metrics").status == 200);  // a fourth: served, in the oldest's place
  await_close(oldest);
  // The others still had their places: each is answered now.
  for (int fd : {second, third}) {
    http_send(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    CHECK(parse_reply(http_read_all(fd)).status == 200);
    ::close(fd);
  }
  ::close(oldest);
}

TEST_CASE("http server: with 1,000 idle connections from 50 addresses open, an authenticated client gets the page "
          "and /metrics") {
  raise_file_limit();  // the clients' 1,000 sockets and the server's
  http_options opts;
  opts.header_timeout = std::chrono::minutes(2);  // the idle ones stay for the whole test
  http_server server(empty_site("s3cret"), opts);
  REQUIRE(server.max_connections() >= 1001);
  int port = server.port();
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    auto from = "127.0.0." + std::to_string(10 + i % 50);  // 20 from each: under the per-client cap
    idle.push_back(http_connect(port, std::chrono::seconds(120), from.c_str()));
    REQUIRE(idle.back() >= 0);
  }
  auto page = http_get(port, "/", {"Authorization: Bearer s3cret"});
  CHECK(page.status == 200);
  CHECK(page.body.find("<html") != std::string::npos);
  CHECK(http_get(port, "/metrics", {"Authorization: Bearer s3cret"}).status == 200);
  size_t still_open = 0;
  for (int fd : idle) {
    still_open += closed_by_server(fd) ? 0 : 1;
    ::close(fd);
  }
  CHECK(still_open == 1000);  // held, not closed to make room: the cap is above them
}

TEST_CASE("http server: keep-alive serves several requests on one connection, and HEAD gets the headers only") {
  http_server server(empty_site(), {});
  int fd = http_connect(server.port());
  REQUIRE(fd >= 0);
  http_send(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nHEAD /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  auto all = http_read_all(fd);
  ::close(fd);
  CHECK(all.find("HTTP/1.1 200 OK") == 0);
  auto head = all.find("HTTP/1.1 200 OK", 10);
  REQUIRE(head != std::string::npos);
  auto last = all.find("HTTP/1.1 404 Not Found");
  REQUIRE(last != std::string::npos);
  CHECK(all.substr(head, last - head).find("\r\n\r\n{") == std::string::npos);  // no body after HEAD's headers
  CHECK(all.find("X-Content-Type-Options: nosniff") != std::string::npos);
  // A port that is taken is an error that says so.
  http_options same;
  same.port = server.port();
  CHECK_THROWS_WITH(http_server(empty_site(), same), doctest::Contains("cannot listen on 127.0.0.1:"));
}

TEST_CASE("http server: every route answers through the socket, GET and HEAD, and the server stays up") {
  auto board = std::make_shared<view_board>();
  auto v = std::make_shared<dashboard_view>();
  auto live = std::make_shared<live_job>(job_facts{1, "bsp", 2, "done", 1, {"head"}, 0.1});
  v->jobs = {{{1, "bsp", 2, 1, 0.9, job_stage::done, {"head"}}, false, live}};
  board->put(v);
  http_server server(std::make_shared<dashboard_site>(board, site_options{"", "/nowhere"}), {});
  int port = server.port();
  std::vector<std::pair<std::string, int>> routes{
    {"/", 200}, {"/jobs/1", 200}, {"/api/cluster", 200}, {"/api/jobs/1", 200}, {"/metrics", 200},
    {"/favicon.ico", 204}, {"/login", 303}, {"/jobs/2", 404}, {"/jobs/1/files/summary.json", 404}, {"/x", 404}};
  for (auto& route : routes)
    for (auto* method : {"GET", "HEAD"}) {
      const std::string& path = route.first;  // not a structured binding: clang refuses those in doctest's lambdas
      auto r = http_request_to(port, method, path);
      CHECK_MESSAGE(r.status == route.second, method << " " << path);
      if (std::string(method) == "HEAD")
        CHECK_MESSAGE(r.body.empty(), method << " " << path);
    }
  CHECK(http_get(port, "/api/cluster").status == 200);
}
