// Fuzz targets: each feeds arbitrary bytes to one reader of outside input.
// A target returns normally when the reader accepted the bytes or refused
// them with its documented error; anything else is a finding: a crash, a
// sanitizer report, another exception, or a broken invariant (fuzz_check).
// libFuzzer drives them (fuzz/libfuzzer_main.cpp); the test suite runs each
// over its seeds and over fuzz/regressions/<target>/ (every finding kept).
//
//   for (auto& t : syncpoint::fuzz::targets())
//     for (auto& s : t.seeds())
//       t.run(reinterpret_cast<const uint8_t*>(s.data()), s.size());
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint::fuzz {

struct target {
  std::string name;                      // also the folder of its regressions
  void (*run)(const uint8_t* data, size_t size);
  std::vector<std::string> (*seeds)();   // valid inputs to start from
};

/// straggler, zipline-csv, schedule, checkpoint, messages.
const std::vector<target>& targets();

/// The target called `name`; throws std::invalid_argument for another name.
const target& find_target(const std::string& name);

}  // namespace syncpoint::fuzz
