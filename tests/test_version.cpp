// One version (issue 27): the header's macros, the library's version() and
// the project's number (CMake's, given to this test) agree, and
// `syncpoint --version` prints it with the build it came from.
#include "core/build_info.hpp"
#include "tests/helpers.hpp"
#include "bench/process.hpp"

#include <syncpoint/version.hpp>

#include <doctest/doctest.h>

#include <string>

TEST_CASE("version: the header, version() and the project's version are one number, and the command prints it") {
  std::string parts = std::to_string(SYNCPOINT_VERSION_MAJOR) + "." + std::to_string(SYNCPOINT_VERSION_MINOR) + "." +
                      std::to_string(SYNCPOINT_VERSION_PATCH);
  CHECK(parts == SYNCPOINT_VERSION_STRING);
  CHECK(std::string(syncpoint::version()) == SYNCPOINT_VERSION_STRING);
  CHECK(std::string(syncpoint::version()) == SYNCPOINT_PROJECT_VERSION);
  std::string build = syncpoint::build_text();
  CHECK(build.rfind(SYNCPOINT_VERSION_STRING, 0) == 0);  // "0.11.0" or "0.11.0 (git ... at configure time)"
  auto run = syncpoint::testing::run_shell(syncpoint::testing::syncpoint_binary() + " --version");
  CHECK(run.status == 0);
  CHECK(run.output == "syncpoint " + build + "\n");
}
