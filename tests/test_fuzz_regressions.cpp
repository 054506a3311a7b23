// The fuzz targets (fuzz/fuzz_targets.hpp) on their seeds and on every input
// a fuzzer found (fuzz/regressions/<target>/): each must be taken or refused
// with its documented error. A finding aborts this test as it did the fuzzer.
#include "fuzz/fuzz_targets.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <filesystem>

using namespace syncpoint;

TEST_CASE("fuzz: every target takes its seeds and every kept finding") {
  for (auto& t : fuzz::targets()) {
    CAPTURE(t.name);
    auto seeds = t.seeds();
    CHECK(!seeds.empty());
    for (auto& s : seeds)
      t.run(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    auto dir = std::filesystem::path(SYNCPOINT_SOURCE_DIR) / "fuzz" / "regressions" / t.name;
    if (!std::filesystem::exists(dir))
      continue;
    for (auto& f : std::filesystem::directory_iterator(dir)) {
      CAPTURE(f.path().string());
      auto bytes = testing::slurp(f.path());
      t.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
  }
}
