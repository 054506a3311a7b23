// The fuzz targets (fuzz/fuzz_targets.hpp) on their seeds and on every input
// a fuzzer found (fuzz/regressions/<target>/): each must be taken or refused
// with its documented error. A finding aborts this test as it did the fuzzer.
#include "fuzz/fuzz_targets.hpp"
#include "runtime/records/checkpoint_file.hpp"
#include <syncpoint/job_config.hpp>
#include "tests/helpers.hpp"

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>

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

TEST_CASE("fuzz: the kept checkpoint findings are refused as corrupt, naming what is wrong") {
  checkpoint_header expect{checkpoint_format, "softmax", 4, "bsp"};
  auto refusal = [&](const std::string& finding) {
    auto bytes = testing::slurp(std::filesystem::path(SYNCPOINT_SOURCE_DIR) / "fuzz/regressions/checkpoint" / finding);
    REQUIRE(bytes.size() > 1);
    REQUIRE(bytes[0] == '\1');  // a payload behind a valid header (fuzz/fuzz_targets.cpp)
    auto payload = bytes.substr(1);
    try {
      parse_checkpoint(checkpoint_file_header(expect, payload) + payload, "f.bin", expect);
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto length = refusal("string-length-beyond-the-file");
  CHECK_MESSAGE(length.find("checkpoint 'f.bin': corrupt (a length of ") == 0, length);
  CHECK_MESSAGE(length.find(" bytes left)") != std::string::npos, length);
  auto flag = refusal("flag-byte-neither-0-nor-1");
  CHECK_MESSAGE(flag.find("checkpoint 'f.bin': corrupt (a flag of ") == 0, flag);
}

TEST_CASE("fuzz: a float block longer than its message is refused before anything is allocated") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  uint64_t claimed = uint64_t{1} << 29;  // 2 GiB of floats, in a message of a few bytes
  REQUIRE(!sink(claimed));
  std::vector<float> values;
  caf::binary_deserializer source{sys, buf.data(), buf.size()};
  float_block block{values};
  auto err = inspect(source, block);
  REQUIRE(err);
  CHECK(sys.render(err).find("float block of 536870912 values in a message of 0 bytes") != std::string::npos);
  CHECK(values.capacity() == 0);
  // And the bits of an infinity cross as they are (CAF's own packing would never return).
  double inf = std::numeric_limits<double>::infinity(), back = 0;
  std::vector<char> bits;
  caf::binary_serializer out{sys, bits};
  auto e = exact(inf);
  REQUIRE(!inspect(out, e));
  caf::binary_deserializer in{sys, bits.data(), bits.size()};
  auto b = exact(back);
  REQUIRE(!inspect(in, b));
  CHECK(back == inf);
}
