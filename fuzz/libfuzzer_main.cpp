// One libFuzzer executable per target (fuzz/fuzz_targets.hpp), built with
// -DSYNCPOINT_FUZZ_TARGET="name". With SYNCPOINT_FUZZ_SEEDS=DIR set, the
// target's seeds are written into DIR first, so a run starts from valid input:
//
//   SYNCPOINT_FUZZ_SEEDS=corpus ./fuzz_straggler corpus -max_total_time=60
#include "fuzz/fuzz_targets.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

const syncpoint::fuzz::target& the_target() {
  static const auto& t = syncpoint::fuzz::find_target(SYNCPOINT_FUZZ_TARGET);
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("SYNCPOINT_FUZZ_SEEDS")) {
    std::filesystem::create_directories(dir);
    int i = 0;
    for (auto& s : the_target().seeds())
      std::ofstream(std::filesystem::path(dir) / ("seed-" + std::to_string(i++)), std::ios::binary) << s;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  the_target().run(data, size);
  return 0;
}
