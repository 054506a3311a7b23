// The dashboard's HTTP server (runtime/cluster/http_server.hpp) in this
// process, with small limits so that each one is reached on purpose: the
// connection cap, a client too slow to send its request, keep-alive, HEAD.
#include "runtime/cluster/dashboard_site.hpp"
#include "runtime/cluster/http_server.hpp"
#include "tests/http_client.hpp"

#include <doctest/doctest.h>

#include <thread>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace syncpoint::testing;

namespace {

std::shared_ptr<dashboard_site> empty_site() {
  return std::make_shared<dashboard_site>(std::make_shared<view_board>(), site_options{"", "/nowhere"});
}

}  // namespace

TEST_CASE("http server: one connection over the cap is told 503 at once, and a freed place is taken again") {
  http_options opts;
  opts.max_connections = 2;
  opts.read_timeout = std::chrono::minutes(2);  // the idle ones stay for the whole test
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
  opts.read_timeout = std::chrono::milliseconds(300);
  http_server server(empty_site(), opts);
  int slow = http_connect(server.port());
  REQUIRE(slow >= 0);
  http_send(slow, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ");
  CHECK(http_get(server.port(), "/metrics").status == 200);
  char byte;
  CHECK(::recv(slow, &byte, 1, 0) == 0);  // closed by the server, with nothing sent
  ::close(slow);
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
  v->jobs = {{{1, "bsp", 2, 1, 0.9, "done", {"head"}}, false, live}};
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
