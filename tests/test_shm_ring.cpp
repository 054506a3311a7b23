// Shared memory between co-located processes (runtime/cluster/dataplane/shm_ring.hpp):
// the ring's placement and room, exactly; the bulk channel through it, bit for
// bit, falling back inline when the ring is full; opt-outs; names removed.
#include "runtime/cluster/dataplane/shm_ring.hpp"
#include "tests/bulk_fixture.hpp"

#include <doctest/doctest.h>

#include <boost/asio.hpp>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace syncpoint::testing;

namespace {

// This process's ring names left in /dev/shm.
int rings_left() {
  int n = 0;
  auto prefix = "syncpoint-bulk-" + std::to_string(getpid()) + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (auto* e = readdir(d))
      n += std::string(e->d_name).rfind(prefix, 0) == 0 ? 1 : 0;
    closedir(d);
  }
  return n;
}

std::vector<char> bytes(size_t n, char seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<char>(seed + i * 7);
  return v;
}

}  // namespace

TEST_CASE("shared-memory ring: a frame starts at the next lap rather than wrap, a full ring has no room until the "
          "reader takes, and the reader removes the name") {
  if (!shared_memory_here()) {
    MESSAGE("no shared memory between processes here: the ring's tests are skipped");
    return;
  }
  std::string error;
  auto w = shm_ring::create(8192, error);
  REQUIRE_MESSAGE(w, error);
  CHECK(w->capacity() == 8192);
  CHECK(rings_left() == 1);
  auto r = shm_ring::open(w->name(), w->capacity(), error);
  REQUIRE_MESSAGE(r, error);
  CHECK(rings_left() == 0);  // both have it mapped: the name has served
  CHECK(shm_open(w->name().c_str(), O_RDONLY, 0) < 0);

  auto a = bytes(5000, 1), b = bytes(5000, 2), c = bytes(3000, 3);
  std::vector<char> out(5000);
  char* first = w->reserve(a.size());
  REQUIRE(first);
  std::memcpy(first, a.data(), a.size());
  CHECK(w->reserve(b.size()) == nullptr);  // it would start at the next lap, over `a`, still unread
  REQUIRE(r->take(a.size(), out.data()));
  CHECK(out == a);
  char* second = w->reserve(b.size());
  CHECK(second == first);  // the next lap's start: 5000 + 5000 does not fit in 8192
  std::memcpy(second, b.data(), b.size());
  CHECK(w->reserve(c.size()) == nullptr);  // 3000 fit after `b` in this lap, but `b` is unread
  REQUIRE(r->take(b.size(), out.data()));
  CHECK(out == b);
  char* third = w->reserve(c.size());
  CHECK(third == first + 5000);  // right after `b`, in the same lap
  std::memcpy(third, c.data(), c.size());
  out.resize(c.size());
  REQUIRE(r->take(c.size(), out.data()));
  CHECK(out == c);
  CHECK(w->reserve(0) == nullptr);
  CHECK(w->reserve(8193) == nullptr);  // longer than the ring: inline
  CHECK_FALSE(r->take(8193, out.data()));

  // A name that is not a bulk ring, or a size its writer did not give, is not opened.
  auto x = shm_ring::create(4096, error);
  REQUIRE(x);
  CHECK_FALSE(shm_ring::open(x->name(), 8192, error));
  CHECK(error == "the ring is not what its writer said");
  CHECK(rings_left() == 1);  // a refused ring's name is not the reader's to remove
  CHECK_FALSE(shm_ring::open("/etc-passwd", 4096, error));
  CHECK_FALSE(shm_ring::open("/syncpoint-bulk-1/../x", 4096, error));
  x.reset();
  CHECK(rings_left() == 0);  // the creator removes a name nobody opened
  CHECK(ring_capacity(1000) == 8192);                // two frames' room, in pages
  CHECK(ring_capacity(uint64_t{1} << 21) == 8u << 20);  // 8 MB frames: one frame's room
  CHECK(ring_capacity(uint64_t{1} << 24) == 64u << 20);  // 64 MB frames: the largest ring
  CHECK(ring_capacity((uint64_t{1} << 24) + 1) == 0);    // longer frames: none (every frame inline)
}

TEST_CASE("bulk channel: co-located sides move floats through shared memory bit for bit, inline when the ring is "
          "full, and all on the wire when either side opts out") {
  for (auto sides : {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
    bool server_shm = sides.first, client_shm = sides.second;  // (clang: no structured binding in CAPTURE's lambda)
    CAPTURE(server_shm);
    CAPTURE(client_shm);
    inbox server_log, got;  // before the io: its end calls their handlers
    {
      bulk_io io;
      bulk_limits server_side, client_side;
      server_side.shared_memory = server_shm;
      client_side.shared_memory = client_shm;
      const uint64_t n = 1 << 18;  // 1 MB frames: a ring of two
      bulk_server server(io, {"k", {}}, echo(), n, server_log.logger(), "127.0.0.1", server_side);
      auto c = bulk_connect(io, {"k", {}}, "127.0.0.1", server.port(), {'h'}, got.handler(), n, 5000, client_side);
      REQUIRE_MESSAGE(c.link, c.error);
      CHECK(c.shared_memory == (server_shm && client_shm && shared_memory_here()));
      // Twelve frames at once: the ring holds two, the rest go inline until the echo has read them.
      std::vector<std::vector<float>> sent;
      for (int i = 0; i < 12; ++i)
        sent.push_back(pattern(i % 3 == 2 ? 17 : n - i, static_cast<float>(i)));
      for (size_t i = 0; i < sent.size(); ++i) {
        auto keep = std::make_shared<std::vector<float>>(sent[i]);
        c.link->send(static_cast<uint32_t>(2 * i), {static_cast<char>(i)}, keep->data(), keep->size(), keep);
      }
      REQUIRE(got.wait([&] { return got.frames.size() == sent.size(); }));
      for (size_t i = 0; i < sent.size(); ++i) {
        CHECK(got.frames[i].kind == 2 * i + 1);
        CHECK(got.frames[i].control == std::vector<char>{static_cast<char>(i)});
        CHECK(got.frames[i].values == sent[i]);
      }
      c.link->close();
      REQUIRE(got.wait([&] { return !got.closed.empty(); }));
    }
    CHECK(got.closed.front() == "");
    CHECK(rings_left() == 0);
  }
}
