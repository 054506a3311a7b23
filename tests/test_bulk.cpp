// The bulk channel's transport (runtime/cluster/dataplane/bulk.hpp): frames cross
// whole, in order and bit for bit, over TCP and over TLS; strangers, wrong
// tokens, refused hellos and oversized frames are turned away with reasons.
#include "runtime/cluster/dataplane/bulk.hpp"
#include "tests/bulk_fixture.hpp"
#include "tests/helpers.hpp"

#include <syncpoint/compressor.hpp>

#include <doctest/doctest.h>

#include <boost/asio.hpp>

#include <condition_variable>
#include <mutex>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace syncpoint::testing;

namespace {

// Whether the floats went through shared memory.
bool round_trip(const bulk_security& server_side, const bulk_security& client_side) {
  inbox server_log, got;  // before the io: its end calls their handlers
  bulk_io io;
  bulk_server server(io, server_side, echo(), 1 << 22, server_log.logger());
  auto c = bulk_connect(io, client_side, "127.0.0.1", server.port(), {'h', 'i'}, got.handler(), 1 << 22);
  REQUIRE_MESSAGE(c.link, c.error);
  std::vector<std::vector<float>> sent{{}, pattern(1000, 1), pattern(1 << 20, -3)};
  for (size_t i = 0; i < sent.size(); ++i) {
    auto keep = std::make_shared<std::vector<float>>(sent[i]);
    c.link->send(static_cast<uint32_t>(10 * i), std::vector<char>(i + 1, static_cast<char>('a' + i)), keep->data(),
                 keep->size(), keep);
  }
  REQUIRE(got.wait([&] { return got.frames.size() == sent.size(); }));
  for (size_t i = 0; i < sent.size(); ++i) {
    CHECK(got.frames[i].kind == 10 * i + 1);
    CHECK(got.frames[i].control == std::vector<char>(i + 1, static_cast<char>('a' + i)));
    CHECK(got.frames[i].values == sent[i]);
  }
  c.link->close();
  REQUIRE(got.wait([&] { return !got.closed.empty(); }));
  CHECK(got.closed.front() == "");
  return c.shared_memory;
}

}  // namespace

TEST_CASE("bulk channel: frames cross both ways whole, in order and bit for bit") {
  CHECK(round_trip({"s3cret", {}}, {"s3cret", {}}) == shared_memory_here());  // one process: through shared memory
}

TEST_CASE("bulk channel: a wrong token, a refused hello and a stranger's bytes are turned away with reasons") {
  inbox log, ignored, got;  // before the io: its end calls their handlers
  bulk_io io;
  bulk_server server(io, {"s3cret", {}}, echo("shard 9"), 1 << 20, log.logger());
  auto wrong = bulk_connect(io, {"guess", {}}, "127.0.0.1", server.port(), {}, ignored.handler(), 16);
  CHECK_FALSE(wrong.link);
  CHECK(wrong.error == "refused: wrong token");
  auto hello = bulk_connect(io, {"s3cret", {}}, "127.0.0.1", server.port(), {'s', 'h', 'a', 'r', 'd', ' ', '9'},
                            ignored.handler(), 16);
  CHECK_FALSE(hello.link);
  CHECK(hello.error == "refused: no such shard");
  {
    boost::asio::io_context ctx;
    boost::asio::ip::tcp::socket s(ctx);
    s.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
    boost::asio::write(s, boost::asio::buffer(std::string("GET / HTTP/1.1\r\n\r\n")));
    REQUIRE(log.wait([&] { return log.log.size() == 3; }));
  }
  CHECK(log.log[0] == "bulk channel: refused a connection: wrong token");
  CHECK(log.log[1] == "bulk channel: refused a connection: no such shard");
  CHECK(log.log[2] == "bulk channel: refused a connection that is not a syncpoint bulk channel");
  // Nothing listens here: the error names the address.
  auto nobody = bulk_connect(io, {}, "127.0.0.1", 1, {}, ignored.handler(), 16);
  CHECK(nobody.error.find("cannot connect to 127.0.0.1:1") == 0);
  // The server still serves.
  auto fine = bulk_connect(io, {"s3cret", {}}, "127.0.0.1", server.port(), {}, got.handler(), 16);
  REQUIRE_MESSAGE(fine.link, fine.error);
}

TEST_CASE("bulk channel: a frame longer than the connection allows closes it, saying why") {
  inbox server_side, client_side;  // before the io: its end calls their handlers
  bulk_io io;
  std::shared_ptr<bulk_link> server_link;
  bulk_accept accept = [&](const std::vector<char>&, std::shared_ptr<bulk_link> link)
    -> std::variant<bulk_handler, std::string> {
    server_link = link;
    return server_side.handler();
  };
  bulk_server server(io, {}, accept, 8, {});
  auto c = bulk_connect(io, {}, "127.0.0.1", server.port(), {}, client_side.handler(), 8);
  REQUIRE_MESSAGE(c.link, c.error);
  auto fits = std::make_shared<std::vector<float>>(8, 1.0f);
  c.link->send(1, {}, fits->data(), fits->size(), fits);
  auto too_long = std::make_shared<std::vector<float>>(9, 1.0f);
  c.link->send(1, {}, too_long->data(), too_long->size(), too_long);
  REQUIRE(server_side.wait([&] { return !server_side.closed.empty(); }));
  CHECK(server_side.frames.size() == 1);
  CHECK(server_side.closed.front() == "a frame of 9 floats exceeds this connection's 8");
  REQUIRE(client_side.wait([&] { return !client_side.closed.empty(); }));
  CHECK(client_side.frames.empty());
}

TEST_CASE("bulk channel: links their owners keep after the channel's thread has gone hear why, take nothing, "
          "and are let go safely") {
  // An actor may hold its link past the process's bulk_io (a proxy quits on
  // the close it hears, later): the sockets and timers must go before their
  // context, which ASan and UBSan builds check here.
  inbox server_side, client_side;
  std::shared_ptr<bulk_link> server_link, client_link;
  {
    bulk_io io;
    bulk_accept accept = [&](const std::vector<char>&, std::shared_ptr<bulk_link> link)
      -> std::variant<bulk_handler, std::string> {
      server_link = link;  // read after the io thread is joined
      return server_side.handler();
    };
    bulk_server server(io, {}, accept, 8, {});
    auto c = bulk_connect(io, {}, "127.0.0.1", server.port(), {}, client_side.handler(), 8);
    REQUIRE_MESSAGE(c.link, c.error);
    client_link = c.link;
  }
  REQUIRE(server_link);
  CHECK(server_side.closed == std::vector<std::string>{"this process is shutting down"});
  CHECK(client_side.closed == std::vector<std::string>{"this process is shutting down"});
  auto values = std::make_shared<std::vector<float>>(4, 1.0f);
  client_link->send(1, {}, values->data(), values->size(), values);  // nowhere to go: dropped
  server_link->close();
  client_link.reset();
  server_link.reset();  // the last of the context, which goes after the sockets
  CHECK(client_side.frames.empty());
  CHECK(server_side.frames.empty());
}

TEST_CASE("bulk channel: over TLS both sides show a certificate from the cluster's CA") {
  if (std::system("command -v openssl > /dev/null 2>&1") != 0) {
    MESSAGE("openssl is not installed: the TLS test is skipped");
    return;
  }
  syncpoint::testing::temp_folder pki_dir("syncpoint_bulk_pki");
  std::filesystem::create_directories(pki_dir.path);
  auto pki = pki_dir.path.string();
  auto sh = [&](const std::string& cmd) {
    REQUIRE_MESSAGE(std::system(("cd " + pki + " && { " + cmd + "; } > /dev/null 2>&1").c_str()) == 0, cmd);
  };
  for (auto ca : {"ca1", "ca2"})
    sh(std::string("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=") + ca + " -keyout " + ca +
       ".key -out " + ca + ".pem");
  for (auto [who, ca] : {std::pair{"server", "ca1"}, std::pair{"client", "ca1"}, std::pair{"stranger", "ca2"}})
    sh(std::string("openssl req -newkey rsa:2048 -nodes -subj /CN=") + who + " -keyout " + who + ".key -out " +
       who + ".csr && openssl x509 -req -days 2 -in " + who + ".csr -CA " + ca + ".pem -CAkey " + ca +
       ".key -CAcreateserial -out " + who + ".pem");
  auto files = [&](const std::string& who, const std::string& ca) {
    return tls_files{pki + "/" + who + ".pem", pki + "/" + who + ".key", pki + "/" + ca + ".pem"};
  };
  CHECK_FALSE(round_trip({"t", files("server", "ca1")}, {"t", files("client", "ca1")}));  // TLS: all on the wire
  inbox log, ignored;  // before the io: its end calls their handlers
  bulk_io io;
  bulk_server server(io, {"t", files("server", "ca1")}, echo(), 16, log.logger());
  auto stranger = bulk_connect(io, {"t", files("stranger", "ca2")}, "127.0.0.1", server.port(), {},
                               ignored.handler(), 16);
  CHECK_FALSE(stranger.link);
  CHECK(stranger.error.find("TLS handshake failed") == 0);
  auto plain = bulk_connect(io, {"t", {}}, "127.0.0.1", server.port(), {}, ignored.handler(), 16, 2000);
  CHECK_FALSE(plain.link);
}

// -- the data plane: a shard's pushes and pulls through the bulk channel --------------

#include "actors/parameter_server.hpp"
#include "runtime/cluster/dataplane/data_plane.hpp"

#include <limits>

namespace {

struct plane_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  ps_actor bulk_ps, plain_ps;  // the same PS twice: one reached on the bulk channel, one through CAF
  inbox log;
  std::unique_ptr<data_plane> plane;

  // shared_memory: as between processes of one machine where it can; false:
  // every float on the socket, as between machines.
  explicit plane_fixture(bool shared_memory = true) {
    syncpoint::register_messages(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    auto config = [&] {
      ps_config c{std::vector<float>(1000, 0.5f), 0.1, 0.5, 0.0, 2, tracer_actor{}, sys->clock().now()};
      c.bulk_keys = {111, 222};
      return c;
    };
    bulk_ps = spawn_parameter_server(*sys, config());
    plain_ps = spawn_parameter_server(*sys, config());
    bulk_limits limits;
    limits.shared_memory = shared_memory;
    plane = std::make_unique<data_plane>(*sys, bulk_security{"tok", {}}, log.logger(), "127.0.0.1", limits);
    plane->serve(bulk_ps, 1000, {111, 222});
  }
  ~plane_fixture() {
    (*self)->send_exit(bulk_ps, caf::exit_reason::user_shutdown);
    (*self)->send_exit(plain_ps, caf::exit_reason::user_shutdown);
  }

  // The shard as worker `w` with `key` sees it: a proxy on the bulk channel.
  ps_actor proxy(int32_t w, uint64_t key) {
    auto g = ps_group::one(bulk_ps, 1000);
    g.bulk = {":" + std::to_string(plane->port())};
    auto p = plane->proxied(g, w, key, "127.0.0.1", true);
    REQUIRE_MESSAGE(p.on_bulk == std::vector<size_t>{0}, (p.notes.empty() ? std::string() : p.notes.front()));
    return p.ps.shards[0];
  }

  // Worker `w` with `key` is refused at its hello (the server's answer to it,
  // so before a gateway could be made for it): no proxy, a note that says why.
  void refused_at_hello(int32_t w, uint64_t key) {
    auto g = ps_group::one(bulk_ps, 1000);
    g.bulk = {":" + std::to_string(plane->port())};
    auto p = plane->proxied(g, w, key, "127.0.0.1", true);
    CHECK(p.on_bulk.empty());
    REQUIRE(p.notes.size() == 1);
    CHECK_MESSAGE(p.notes[0].find("refused: not worker " + std::to_string(w) + "'s key for shard") != std::string::npos,
                  p.notes[0]);
  }

  // wire_bytes > 0: a compressed gradient (--compress), whose encoding takes that many.
  caf::error push(const ps_actor& to, worker_id w, std::vector<float> g, uint64_t wire_bytes = 0) {
    caf::error result;
    (*self)->request(to, std::chrono::seconds(30), push_atom::value, gradient_push{w, 1, 0, 64, std::move(g), wire_bytes})
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    return result;
  }

  weights pull(const ps_actor& from) {
    weights out;
    (*self)->request(from, std::chrono::seconds(30), pull_atom::value, uint64_t{0})
      .receive([&](weights& w) { out = std::move(w); }, [&](caf::error& e) { FAIL("pull: " << sys->render(e)); });
    return out;
  }
};

}  // namespace

TEST_CASE("data plane: pushes and pulls on the bulk channel change the shard exactly as through CAF") {
  plane_fixture f;
  auto as0 = f.proxy(0, 111), as1 = f.proxy(1, 222);
  for (int round = 0; round < 3; ++round) {
    auto g0 = pattern(1000, 0.01f * static_cast<float>(round + 1)), g1 = pattern(1000, -0.02f);
    CHECK(!f.push(as0, 0, g0));
    CHECK(!f.push(f.plain_ps, 0, g0));
    CHECK(!f.push(as1, 1, g1));
    CHECK(!f.push(f.plain_ps, 1, g1));
  }
  auto a = f.pull(as0), b = f.pull(f.plain_ps);
  CHECK(a.version == 6);
  CHECK(a.version == b.version);
  CHECK(a.values.vec() == b.values.vec());  // bit for bit
}

TEST_CASE("data plane: a compressed gradient crosses a socket packed, and the shard applies exactly its floats") {
  for (bool shared_memory : {false, true}) {
    CAPTURE(shared_memory);
    plane_fixture f(shared_memory);
    auto as0 = f.proxy(0, 111);
    uint64_t packed = 0;
    for (auto spec : {"bf16", "fp16", "topk:0.01", "randomk:0.1", "onebit"}) {
      CAPTURE(spec);
      auto g = pattern(1000, 0.01f);
      std::vector<float> residual(g.size(), 0.0f);
      auto bytes = compress_with_feedback(*make_compressor(spec), g.data(), residual.data(), g.size(), 1);
      CHECK(!f.push(as0, 0, g, bytes));
      CHECK(!f.push(f.plain_ps, 0, g, bytes));
      if (!shared_memory || !shared_memory_here())
        ++packed;  // through shared memory the floats go as they are: a copy costs less than packing
      CHECK(f.plane->packed_pushes() == packed);
    }
    CHECK(!f.push(as0, 0, pattern(1000, 0.02f)));  // not compressed: as it is
    CHECK(!f.push(f.plain_ps, 0, pattern(1000, 0.02f)));
    CHECK(f.plane->packed_pushes() == packed);
    auto a = f.pull(as0), b = f.pull(f.plain_ps);
    CHECK(a.version == 6);
    CHECK(a.version == b.version);
    CHECK(a.values.vec() == b.values.vec());  // bit for bit
  }
}

TEST_CASE("data plane: a wrong key or another worker's key is refused at the hello, a wrong length and NaN as the PS "
          "refuses them") {
  plane_fixture f;
  auto has = [&](const caf::error& e, const std::string& says) {
    auto text = f.sys->render(e);
    CHECK_MESSAGE(text.find(says) != std::string::npos, text);
  };
  f.refused_at_hello(0, 999);
  f.refused_at_hello(1, 111);  // worker 0's key as worker 1
  f.refused_at_hello(7, 111);  // no such worker
  auto as0 = f.proxy(0, 111);
  has(f.push(as0, 0, pattern(999, 1)), "has 999 values, the model has 1000");
  auto nan = pattern(1000, 1);
  nan[500] = std::numeric_limits<float>::quiet_NaN();
  has(f.push(as0, 0, nan), "contains NaN or Inf");
  // None of it reached the model, and the proxy still works.
  auto w = f.pull(as0);
  CHECK(w.version == 0);
  CHECK(w.values.vec() == std::vector<float>(1000, 0.5f));
  CHECK(!f.push(as0, 0, pattern(1000, 1)));
}

// -- one pull per version for the workers of a process (runtime/cluster/dataplane/pull_share.hpp) --------

#include "runtime/cluster/dataplane/pull_share.hpp"

TEST_CASE("data plane: proxies asking one share for a version fetch it once, the others get the same weights, "
          "and a failed fetch or a fetcher gone passes the fetch on") {
  plane_fixture f;
  auto share = spawn_pull_share(*f.sys, f.bulk_ps);
  caf::scoped_actor a{*f.sys}, b{*f.sys}, c{*f.sys};
  auto ask = [&](caf::scoped_actor& who, uint64_t v) { return who->request(share, std::chrono::seconds(60), pull_atom::value, v); };
  auto expect = [&](auto&& handle, bool fetch) {
    share_reply out;
    std::move(handle).receive([&](share_reply& r) { out = std::move(r); },
                              [&](caf::error& e) { FAIL("share: " << f.sys->render(e)); });
    CHECK(out.fetch == fetch);
    return out;
  };
  // a asks first and fetches; b asks while a's fetch is on its way and gets a's weights.
  expect(ask(a, 5), true);
  auto waiting = ask(b, 5);
  weights w{7, shared_floats(std::vector<float>(1000, 0.25f))};
  a->send(share, fetched_atom::value, uint64_t{5}, w);
  auto got = expect(std::move(waiting), false);
  CHECK(got.w.version == 7);
  CHECK(got.w.values.shared() == w.values.shared());  // the same buffer: read-only, shared as a local PS's
  // That version is done: the next to ask fetches again.
  expect(ask(c, 5), true);
  c->send(share, fetched_atom::value, uint64_t{5}, w);
  // A fetch that fails: the first waiter fetches instead.
  expect(ask(a, 6), true);
  auto b6 = ask(b, 6);
  auto c6 = ask(c, 6);
  a->send(share, fetch_failed_atom::value, uint64_t{6});
  expect(std::move(b6), true);
  b->send(share, fetched_atom::value, uint64_t{6}, w);
  CHECK(expect(std::move(c6), false).w.version == 7);
  // A fetcher that goes (a scoped actor ends with its scope): its waiter fetches instead.
  auto b8 = [&] {
    caf::scoped_actor gone{*f.sys};
    expect(ask(gone, 8), true);
    return ask(b, 8);
  }();
  expect(std::move(b8), true);
  a->send_exit(share, caf::exit_reason::user_shutdown);
}

TEST_CASE("data plane: two workers of one process pulling from a shard of another through shared proxies get "
          "the shard's weights, version by version") {
  plane_fixture f;
  auto as0 = f.proxy(0, 111), as1 = f.proxy(1, 222);  // the second makes both pull through one share
  for (int round = 1; round <= 4; ++round) {
    CHECK(!f.push(as0, 0, pattern(1000, 0.01f * static_cast<float>(round))));
    CHECK(!f.push(f.plain_ps, 0, pattern(1000, 0.01f * static_cast<float>(round))));
    // Both ask for the version just made, at once; each gets it whole.
    caf::scoped_actor x{*f.sys}, y{*f.sys};
    auto v = static_cast<uint64_t>(round);
    auto hx = x->request(as0, std::chrono::seconds(60), pull_atom::value, v);
    auto hy = y->request(as1, std::chrono::seconds(60), pull_atom::value, v);
    weights wx, wy;
    std::move(hx).receive([&](weights& w) { wx = std::move(w); }, [&](caf::error& e) { FAIL(f.sys->render(e)); });
    std::move(hy).receive([&](weights& w) { wy = std::move(w); }, [&](caf::error& e) { FAIL(f.sys->render(e)); });
    auto truth = f.pull(f.plain_ps);
    CHECK(wx.version == v);
    CHECK(wy.version == v);
    CHECK(wx.values.vec() == truth.values.vec());
    CHECK(wy.values.vec() == truth.values.vec());
  }
  // A worker without its key gets no connection at all, so no share either.
  f.refused_at_hello(1, 999);
}
