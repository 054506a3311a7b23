// Gradient compression (--compress, docs/compression.md): each compressor on
// scripted values, error feedback to the float, the bytes a push takes on the
// wire in the trace, the summary and the link model's charge, a run with
// residuals resumed bit for bit, and every protocol with every compressor.
#include <syncpoint/compressor.hpp>
#include <syncpoint/protocol.hpp>
#include <syncpoint/train.hpp>

#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <Eigen/Core>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

using namespace syncpoint;
namespace fs = std::filesystem;

namespace {

std::vector<float> compressed(const std::string& spec, std::vector<float> v, uint64_t* bytes = nullptr,
                              uint64_t seed = 7) {
  auto c = make_compressor(spec);
  REQUIRE(c);
  auto b = c->compress(v.data(), v.size(), seed);
  CHECK(b == c->bytes(v.size()));  // the bytes depend on the length alone
  if (bytes)
    *bytes = b;
  return v;
}

uint64_t pushes(const run_result& r) {
  return static_cast<uint64_t>(
    std::count_if(r.trace.begin(), r.trace.end(), [](const trace_event& e) { return e.kind == "push"; }));
}

}  // namespace

TEST_CASE("compress: each compressor's output and bytes on scripted values") {
  uint64_t bytes = 0;
  CHECK(make_compressor("none") == nullptr);
  CHECK(compressed("fp16", {1.0f / 3, 70000.0f}, &bytes) ==
        std::vector<float>{static_cast<float>(Eigen::half(1.0f / 3)), 65504.0f});
  CHECK(bytes == 4);
  CHECK(compressed("bf16", {1.0f / 3, 70000.0f}, &bytes) ==
        std::vector<float>{static_cast<float>(Eigen::bfloat16(1.0f / 3)), static_cast<float>(Eigen::bfloat16(70000.0f))});
  CHECK(bytes == 4);
  CHECK(compressed("topk:0.5", {1, -3, 2, 0.5f}, &bytes) == std::vector<float>{0, -3, 2, 0});
  CHECK(bytes == 16);  // 2 values and their indices
  CHECK(compressed("topk:0.25", {2, -2, 2, 1}) == std::vector<float>{2, 0, 0, 0});  // a tie: the lower index
  CHECK(compressed("onebit", {1, -3, 2, -2}, &bytes) == std::vector<float>{2, -2, 2, -2});  // mean |v| = 2
  CHECK(bytes == 1 + 4);
  std::vector<float> ones(100, 1.0f);
  auto r = compressed("randomk:0.1", ones, &bytes);
  CHECK(std::count(r.begin(), r.end(), 1.0f) == 10);
  CHECK(std::count(r.begin(), r.end(), 0.0f) == 90);
  CHECK(bytes == 10 * 4 + 8);
  CHECK(compressed("randomk:0.1", ones, nullptr, 7) == r);   // the same seed draws the same
  CHECK(compressed("randomk:0.1", ones, nullptr, 8) != r);
  CHECK(make_compressor("topk:1")->bytes(3) == 24);
  CHECK(make_compressor("topk:0.07")->bytes(100) == 7 * 8);  // (0.07 * 100 is a hair over 7 in double)
  CHECK(compressed("fp16", {1e5f, -1e6f}) == std::vector<float>{65504, -65504});  // the largest half
  // int8 and int4: blocks of 64 whole numbers times the block's largest magnitude over 127 or 7.
  CHECK(compressed("int4", {7, -3.4f, 1.2f, 0}, &bytes) == std::vector<float>{7, -3, 1, 0});
  CHECK(bytes == 2 + 4);
  CHECK(compressed("int8", {127, -0.6f, 63.5f}, &bytes) == std::vector<float>{127, -1, 64});  // 63.5: to even
  CHECK(bytes == 3 + 4);
  CHECK(make_compressor("int8")->bytes(129) == 129 + 3 * 4);
  CHECK(make_compressor("int4")->bytes(129) == 65 + 3 * 4);
  CHECK(compressed("fp8", {0.3f, -500, 1e-6f}, &bytes) == std::vector<float>{0.3125f, -448, 0});
  CHECK(bytes == 3);
  std::vector<float> nan{1, std::nanf(""), -2, 0.5f};
  auto kept = compressed("topk:0.5", nan);
  CHECK(std::isnan(kept[1]));  // NaN ranks largest (the PS refuses the push)
  CHECK(kept[2] == -2);
}

TEST_CASE("compress: a bad --compress is refused by name") {
  auto refused = [](const std::string& spec) {
    try {
      make_compressor(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto unknown = refused("gzip");
  CHECK(unknown.find("unknown compressor 'gzip' (valid: none, bf16, fp16, ") == 0);
  CHECK(unknown.find("onebit, randomk:R, topk:R") != std::string::npos);
  CHECK(refused("topk") == "'topk' needs the share of values it sends: 'topk:R', R in (0, 1]");
  CHECK(refused("topk:0") == "'topk:0': R must be a number in (0, 1], the share of values sent");
  CHECK(refused("topk:1.5").find("R must be a number in (0, 1]") != std::string::npos);
  CHECK(refused("randomk:x").find("R must be a number") != std::string::npos);
  CHECK(refused("fp16:0.5") == "'fp16' takes no ratio: give it as 'fp16'");
  CHECK(refused("") == "no compressor named (none: the gradient as it is)");
  auto cfg = testing::small_job("bsp");
  cfg.compress = "topk:2";
  CHECK_THROWS_WITH_AS(train(cfg), doctest::Contains("--compress: 'topk:2': R must be a number in (0, 1]"),
                       config_error);
}

TEST_CASE("compress: int8, int4 and fp8 stay within their rounding's bound of every value") {
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 0.02f);
  std::vector<float> g(1000);
  for (auto& x : g)
    x = d(rng);
  g[17] = 3;  // a large value in one block: its scale is large, the others' are not
  for (auto [spec, levels] : {std::pair<const char*, float>{"int8", 127}, {"int4", 7}}) {
    CAPTURE(spec);
    auto q = compressed(spec, g);
    for (size_t b = 0; b < g.size(); b += 64) {
      float largest = 0;
      for (size_t i = b; i < std::min(g.size(), b + 64); ++i)
        largest = std::max(largest, std::fabs(g[i]));
      for (size_t i = b; i < std::min(g.size(), b + 64); ++i)
        CHECK(std::fabs(q[i] - g[i]) <= largest / levels / 2 * (1 + 1e-6f));  // half a step
    }
  }
  auto q = compressed("fp8", g);
  for (size_t i = 0; i < g.size(); ++i)  // half a unit of 3 bits of mantissa, or of the subnormals' step
    CHECK(std::fabs(q[i] - g[i]) <= std::max(std::fabs(g[i]) / 16, std::ldexp(1.0f, -10)));
}

TEST_CASE("compress: a value that is not finite stays so through int8, int4 and fp8, for the PS to refuse") {
  std::vector<float> g(130, 0.01f);
  g[70] = std::numeric_limits<float>::quiet_NaN();  // the second block
  g[129] = std::numeric_limits<float>::infinity();  // the third
  for (const char* spec : {"int8", "int4", "fp8"}) {
    CAPTURE(spec);
    auto q = compressed(spec, g);
    CHECK(std::isnan(q[70]));
    CHECK(std::isinf(q[129]));
    CHECK(std::isfinite(q[0]));  // the first block rounds as ever
    CHECK(std::fabs(q[0] - 0.01f) <= 0.01f / 7);
  }
}

TEST_CASE("compress: error feedback sends, push after push, what the hand computation says") {
  auto topk = make_compressor("topk:0.5");
  std::vector<float> e(4, 0.0f);
  std::vector<float> g{1, -3, 2, 0.5f};
  CHECK(compress_with_feedback(*topk, g.data(), e.data(), 4, 0) == 16);
  CHECK(g == std::vector<float>{0, -3, 2, 0});
  CHECK(e == std::vector<float>{1, 0, 0, 0.5f});
  g = {0.5f, 0.5f, 0.5f, 0.5f};  // + e = {1.5, 0.5, 0.5, 1}: the two largest go
  compress_with_feedback(*topk, g.data(), e.data(), 4, 0);
  CHECK(g == std::vector<float>{1.5f, 0, 0, 1});
  CHECK(e == std::vector<float>{0, 0.5f, 0.5f, 0});
  // onebit: what the sign loses comes back.
  auto sign = make_compressor("onebit");
  std::vector<float> r(2, 0.0f), h{3, 1};
  compress_with_feedback(*sign, h.data(), r.data(), 2, 0);
  CHECK(h == std::vector<float>{2, 2});
  CHECK(r == std::vector<float>{1, -1});
  h = {3, 1};  // + r = {4, 0}: mean 2
  compress_with_feedback(*sign, h.data(), r.data(), 2, 0);
  CHECK(h == std::vector<float>{2, 2});
  CHECK(r == std::vector<float>{2, -2});
  // What fp16 cannot hold goes later; a non-finite gradient is refused once, not carried on.
  auto half = make_compressor("fp16");
  std::vector<float> big{1e5f}, carried(1, 0.0f);
  compress_with_feedback(*half, big.data(), carried.data(), 1, 0);
  CHECK(big[0] == 65504);
  CHECK(carried[0] == 1e5f - 65504);
  std::vector<float> bad{std::nanf(""), std::numeric_limits<float>::infinity()}, kept(2, 1.0f);
  compress_with_feedback(*half, bad.data(), kept.data(), 2, 0);
  CHECK(kept == std::vector<float>{0, 0});
}

TEST_CASE("compress: the trace and the summary count each push's bytes, and the link model charges them") {
  auto cfg = testing::small_job("bsp");
  cfg.model = "mlp";
  cfg.iter_cost_ms = 0.7;
  cfg.ps_bandwidth = 400e6;
  auto plain = train(cfg);
  cfg.compress = "bf16";
  auto half = train(cfg);
  const uint64_t mlp = 784 * 256 + 256 + 256 * 10 + 10;  // parameters
  CHECK(plain.summary.compress == "none");
  CHECK(half.summary.compress == "bf16");
  CHECK(plain.summary.pushed_bytes == pushes(plain) * mlp * 4);
  CHECK(half.summary.pushed_bytes == pushes(half) * mlp * 2);
  // bsp, same pushes and pulls; a pull as many bytes as a plain push: the links carry 3/4.
  REQUIRE(pushes(half) == pushes(plain));
  CHECK(half.summary.link_busy_s == doctest::Approx(0.75 * plain.summary.link_busy_s).epsilon(0.01));
  CHECK(half.summary.run_time_s < plain.summary.run_time_s);
  cfg.internals.wire_bytes = 4e6;  // a model charged as 4 MB (simulate's named model): topk keeps 1 % of that
  cfg.compress = "topk:0.01";
  auto scaled = train(cfg);
  CHECK(scaled.summary.pushed_bytes == pushes(scaled) * 8 * 10000);
  cfg.internals.wire_bytes = 0;
  cfg.ps_shards = 3;  // each slice compressed alone: its own bytes
  cfg.compress = "topk:0.01";
  auto sharded = train(cfg);
  CHECK(sharded.summary.pushed_bytes < pushes(sharded) * mlp * 4 / 40);
}

TEST_CASE("compress: a run with residuals resumed from a middle checkpoint ends bit for bit as the run never stopped") {
  testing::temp_folder dir("syncpoint_compress_resume");
  for (auto spec : {"topk:0.05", "randomk:0.1", "onebit"}) {
    CAPTURE(spec);
    auto cfg = testing::small_job("ssp");
    cfg.model = "mlp";
    cfg.iter_cost_ms = 0.7;
    cfg.ps_bandwidth = 400e6;
    cfg.straggler = "3:x4";
    cfg.compress = spec;
    auto plain = train(cfg);
    cfg.checkpoint_every_s = plain.summary.run_time_s / 4;
    cfg.checkpoint_dir = (dir.path / spec / "all").string();
    cfg.checkpoint_keep = 0;
    auto whole = train(cfg);
    CHECK(whole.final_model.values == plain.final_model.values);
    auto files = testing::checkpoint_files(cfg.checkpoint_dir);
    REQUIRE(files.size() >= 2);
    auto resumed = train(testing::resuming_from(cfg, files[files.size() / 2], dir.path / spec / "from"));
    CHECK(resumed.final_model.values == whole.final_model.values);
    CHECK(resumed.summary.pushed_bytes + 0 > 0);
    REQUIRE(resumed.trace.size() == whole.trace.size());
    for (size_t i = 0; i < whole.trace.size(); ++i)
      if (whole.trace[i].kind == "push")
        CHECK(resumed.trace[i].value == whole.trace[i].value);
    // A resume with another compressor is refused: the residuals are the checkpoint's.
    auto other = testing::resuming_from(cfg, files.front(), dir.path / spec / "other");
    other.compress = "none";
    CHECK_THROWS_WITH_AS(train(other), doctest::Contains("compress"), config_error);
  }
}

TEST_CASE("compress: every protocol trains with every compressor") {
  std::vector<std::string> specs{"none", "fp16", "bf16", "topk:0.1", "randomk:0.25", "onebit"};
  for (auto& entry : protocol_catalog()) {
    const auto& protocol = entry.first;
    if (protocol.rfind("test-", 0) == 0)
      continue;
    for (auto& spec : specs) {
      CAPTURE(protocol);
      CAPTURE(spec);
      auto cfg = testing::small_job(protocol);
      cfg.compress = spec;
      cfg.epochs = 3;
      auto r = train(cfg);
      CHECK(r.summary.final_accuracy > 0.6);
      CHECK(r.summary.pushed_bytes > 0);
      CHECK(r.summary.rejected == 0);
    }
  }
}
