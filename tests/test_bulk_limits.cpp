// The bulk channel's limits (runtime/cluster/dataplane/bulk.hpp, bulk_limits; issue 42):
// a hostile peer cannot hold a server. A silent or stalled connection is
// closed after the idle limit, a client that only pings is not, connections
// that never say hello are capped with the oldest making room, and a peer
// that does not read its answers stops being read, then is let go.
#include "runtime/cluster/dataplane/bulk.hpp"
#include "tests/bulk_fixture.hpp"

#include <doctest/doctest.h>

#include <boost/asio.hpp>

#include <poll.h>

#include <array>
#include <cstring>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace syncpoint::testing;

namespace {

namespace asio = boost::asio;

// A raw client: the greeting (magic, token, hello) as the wire has it, and the
// server's answer (1: accepted, else 0 and why).
struct raw_client {
  asio::io_context ctx;
  asio::ip::tcp::socket s{ctx};
  explicit raw_client(uint16_t port) { s.connect({asio::ip::make_address("127.0.0.1"), port}); }
  bool greet(const std::string& token, const std::string& hello) {
    std::string out = "spbulk04";
    auto put = [&](uint32_t n) { out.append(reinterpret_cast<const char*>(&n), 4); };
    put(static_cast<uint32_t>(token.size()));
    out += token;
    put(static_cast<uint32_t>(hello.size()));
    out += hello;
    put(0);  // no shared memory offered
    asio::write(s, asio::buffer(out));
    std::array<char, 5> answer{};
    asio::read(s, asio::buffer(answer));
    if (answer[0] != 1)
      return false;
    std::array<char, 4> offer{};  // an accepted answer has no words, then the server's offer: none to none
    asio::read(s, asio::buffer(offer));
    return offer == std::array<char, 4>{};
  }
  // Blocks until the server closes the connection (true), or it sends bytes (false).
  bool closed_by_server() {
    char byte;
    boost::system::error_code ec;
    s.read_some(asio::buffer(&byte, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }
};

bulk_limits quick(std::chrono::milliseconds idle) {
  bulk_limits l;
  l.idle = idle;
  return l;
}

}  // namespace

TEST_CASE("bulk channel: a connection that sends a valid hello and then stalls is closed after the idle limit") {
  inbox log;
  bulk_io io;
  bulk_server server(io, {"s3cret", {}}, echo(), 1 << 20, log.logger(), "127.0.0.1", quick(std::chrono::milliseconds(300)));
  raw_client c(server.port());
  // Before the hello: the server's idle clock starts when it has read the
  // hello, which may be before this client has read the server's answer.
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(c.greet("s3cret", "hi"));
  CHECK(c.closed_by_server());
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(300));  // not before its time
  // Half a frame, then nothing: closed too.
  raw_client half(server.port());
  REQUIRE(half.greet("s3cret", "hi"));
  std::array<char, 16> head{};
  uint32_t kind = 1, control = 0;
  uint64_t floats = 1000;
  std::memcpy(head.data(), &kind, 4);
  std::memcpy(head.data() + 4, &control, 4);
  std::memcpy(head.data() + 8, &floats, 8);
  asio::write(half.s, asio::buffer(head));
  asio::write(half.s, asio::buffer(std::vector<char>(100, 0)));  // of 4000 bytes
  CHECK(half.closed_by_server());
}

TEST_CASE("bulk channel: a client with nothing to send pings, and its connection outlives the idle limit") {
  inbox got;
  bulk_io io;
  auto limits = quick(std::chrono::milliseconds(2000));
  limits.ping = std::chrono::milliseconds(50);
  bulk_server server(io, {}, echo(), 1 << 20, {}, "127.0.0.1", limits);
  auto c = bulk_connect(io, {}, "127.0.0.1", server.port(), {}, got.handler(), 1 << 20, 5000, limits);
  REQUIRE_MESSAGE(c.link, c.error);
  // Twice, a silent connection opened after it is closed for idleness: the
  // pinging one has then been silent but for pings over twice the limit.
  for (int i = 0; i < 2; ++i) {
    raw_client silent(server.port());
    REQUIRE(silent.greet("", "hi"));
    REQUIRE(silent.closed_by_server());
  }
  auto v = std::make_shared<std::vector<float>>(pattern(64, 2));
  c.link->send(7, {}, v->data(), v->size(), v);
  REQUIRE(got.wait([&] { return got.frames.size() == 1 || !got.closed.empty(); }));
  CHECK(got.closed.empty());
  REQUIRE(got.frames.size() == 1);
  CHECK(got.frames[0].kind == 8);  // echoed: the connection is alive
  CHECK(got.frames[0].values == *v);
}

TEST_CASE("bulk channel: connections that never say hello are capped, the oldest making room, and a client gets in") {
  inbox got;
  bulk_io io;
  bulk_limits limits;
  limits.max_greeting = 4;
  limits.greeting = std::chrono::minutes(2);  // they would wait that long
  bulk_server server(io, {}, echo(), 1 << 20, {}, "127.0.0.1", limits);
  std::vector<std::unique_ptr<raw_client>> silent;
  for (int i = 0; i < 10; ++i)
    silent.push_back(std::make_unique<raw_client>(server.port()));
  // Ten came, four may wait: the six oldest were closed, in order.
  for (int i = 0; i < 6; ++i)
    CHECK_MESSAGE(silent[static_cast<size_t>(i)]->closed_by_server(), "silent connection " << i);
  auto c = bulk_connect(io, {}, "127.0.0.1", server.port(), {}, got.handler(), 1 << 20, 30000, limits);
  REQUIRE_MESSAGE(c.link, c.error);
  auto v = std::make_shared<std::vector<float>>(pattern(16, 1));
  c.link->send(1, {}, v->data(), v->size(), v);
  REQUIRE(got.wait([&] { return got.frames.size() == 1; }));
  CHECK(got.frames[0].values == *v);
}

TEST_CASE("bulk channel: a peer that does not read its answers is not read either, then let go") {
  inbox log;
  bulk_io io;
  auto limits = quick(std::chrono::milliseconds(1000));
  limits.max_queued_bytes = 1 << 20;
  bulk_server server(io, {}, echo(), 1 << 20, log.logger(), "127.0.0.1", limits);
  raw_client c(server.port());
  REQUIRE(c.greet("", "hi"));
  // Frames of 256 KB, each echoed, and nothing read: without a bound the
  // server would read all 200 (51 MB) and queue their echoes.
  std::vector<char> frame(16 + (256 << 10));
  uint32_t kind = 1, control = 0;
  uint64_t floats = 64 << 10;
  std::memcpy(frame.data(), &kind, 4);
  std::memcpy(frame.data() + 4, &control, 4);
  std::memcpy(frame.data() + 8, &floats, 8);
  c.s.non_blocking(true);
  size_t sent = 0, total = 200 * frame.size();
  boost::system::error_code ec;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);  // for a hang only
  while (sent < total && std::chrono::steady_clock::now() < deadline) {
    auto n = c.s.write_some(asio::buffer(frame.data() + sent % frame.size(), frame.size() - sent % frame.size()), ec);
    sent += n;
    if (ec == asio::error::would_block)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    else if (ec)
      break;  // the server closed it
  }
  CHECK(ec);
  CHECK(ec != asio::error::would_block);
  CHECK(sent < total / 2);  // stopped well short: the server stopped reading, then closed it
}


TEST_CASE("bulk channel: a frame that says its floats are in shared memory, on a connection that agreed to none, "
          "closes it at once") {
  inbox log;
  bulk_io io;
  bulk_server server(io, {}, echo(), 1 << 20, log.logger(), "127.0.0.1", quick(std::chrono::milliseconds(60'000)));
  raw_client c(server.port());
  REQUIRE(c.greet("", "hi"));  // (no offer: no ring)
  std::array<char, 16> head{};
  uint32_t kind = 1, control = 1u << 31;  // "in the ring"
  uint64_t floats = 4;
  std::memcpy(head.data(), &kind, 4);
  std::memcpy(head.data() + 4, &control, 4);
  std::memcpy(head.data() + 8, &floats, 8);
  asio::write(c.s, asio::buffer(head));
  CHECK(c.closed_by_server());  // long before the idle limit of a minute
}
