// What crosses nodes: float arrays as one block of bytes, every message type
// round-trips through CAF's binary serialization, a corrupt length is refused.
#include <syncpoint/job_config.hpp>
#include "core/messages.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <doctest/doctest.h>

#include <cstring>

using namespace syncpoint;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fixture() {
    register_messages(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  template <class T>
  std::vector<char> save(T& x) {
    std::vector<char> buf;
    caf::binary_serializer sink{*sys, buf};
    auto err = sink(x);
    REQUIRE(!err);
    return buf;
  }

  template <class T>
  caf::error load(const std::vector<char>& buf, T& x) {
    caf::binary_deserializer source{*sys, buf};
    return source(x);
  }
};

}  // namespace

TEST_CASE("transport: a gradient is one block of bytes, not one field per float") {
  fixture f;
  std::vector<float> grad(250000);
  for (size_t i = 0; i < grad.size(); ++i)
    grad[i] = static_cast<float>(i) * 0.5f - 3.0f;
  gradient_push g{3, 17, 5, 64, grad, 123};
  auto buf = f.save(g);
  // Four header fields (4+8+8+4 bytes), a length, exactly the floats' bytes, then the wire bytes (8)
  // the fragment's ranges and a sparse model's rows (none here: their lengths, one byte each as CAF
  // writes a short one).
  const size_t tail = sizeof(uint64_t) + 2;
  REQUIRE(buf.size() >= grad.size() * sizeof(float) + tail);
  CHECK(buf.size() <= grad.size() * sizeof(float) + 48);
  CHECK(std::memcmp(buf.data() + buf.size() - tail - grad.size() * sizeof(float), grad.data(),
                    grad.size() * sizeof(float)) == 0);
  gradient_push back;
  REQUIRE(!f.load(buf, back));
  CHECK(back.worker == 3);
  CHECK(back.iter == 17);
  CHECK(back.base_version == 5);
  CHECK(back.samples == 64);
  CHECK(back.grad == grad);
  CHECK(back.wire_bytes == 123);
}

TEST_CASE("transport: a slice that views a gradient crosses as the same bytes as one with its own floats") {
  fixture f;
  std::vector<float> grad(1000);
  for (size_t i = 0; i < grad.size(); ++i)
    grad[i] = static_cast<float>(i) * 0.25f;
  auto whole = std::make_shared<const std::vector<float>>(grad);
  gradient_push view{1, 2, 3, 8, float_slice(whole, 200, 700), 0};
  gradient_push own{1, 2, 3, 8, std::vector<float>(grad.begin() + 200, grad.begin() + 700), 0};
  auto buf = f.save(view);
  CHECK(buf == f.save(own));
  CHECK(view.grad.is_view());  // written out, still the view
  gradient_push back;
  REQUIRE(!f.load(buf, back));
  CHECK(!back.grad.is_view());  // read back: floats of its own
  CHECK(back.grad == own.grad);
}

TEST_CASE("transport: weights keep their values and version, a job config round-trips") {
  fixture f;
  weights w{42, shared_floats(std::vector<float>{1.5f, -2.0f, 3.25f})};
  auto buf = f.save(w);
  weights back;
  REQUIRE(!f.load(buf, back));
  CHECK(back.version == 42);
  CHECK(back.values == w.values);

  job_config cfg;
  cfg.protocol = "ssp";
  cfg.protocol_opts.set("staleness", 7);
  cfg.protocol_opts.set("zipline-variant", "zipline");
  cfg.straggler = "1:x3";
  cfg.clock = clock_kind::real;
  cfg.internals.fail_worker = 2;
  auto cbuf = f.save(cfg);
  job_config cback;
  REQUIRE(!f.load(cbuf, cback));
  CHECK(cback.protocol == "ssp");
  CHECK(cback.protocol_opts.integer("staleness") == 7);
  CHECK(cback.protocol_opts.text("zipline-variant") == "zipline");
  CHECK(cback.straggler == "1:x3");
  CHECK(cback.clock == clock_kind::real);
  CHECK(cback.internals.fail_worker == 2);
}

TEST_CASE("transport: a truncated buffer or an absurd length is an error, not a crash") {
  fixture f;
  gradient_push g{0, 1, 0, 8, std::vector<float>(1000, 1.0f)};
  auto buf = f.save(g);
  gradient_push back;
  auto cut = std::vector<char>(buf.begin(), buf.begin() + static_cast<long>(buf.size() / 2));
  CHECK(f.load(cut, back));
  // Overwrite the length field (right before the floats, which the wire bytes, the ranges and the rows follow) with 2^40 floats.
  auto at = buf.size() - (sizeof(uint64_t) + 2) - 1000 * sizeof(float) - sizeof(uint64_t);
  uint64_t huge = uint64_t{1} << 40;
  std::memcpy(buf.data() + at, &huge, sizeof huge);
  gradient_push bad;
  CHECK(f.load(buf, bad));
}
