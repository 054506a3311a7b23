// What a run records of the build that made it (run.json) and `syncpoint
// --version` prints: the version, and the commit when built from git.
//
//   std::printf("syncpoint %s\n", syncpoint::build_text());
//   // syncpoint 0.11.0 (git 91a2f5c at configure time)
#pragma once

namespace syncpoint {

/// "0.11.0", or "0.11.0 (git DESCRIBE at configure time)" when built from a git tree.
const char* build_text();

}  // namespace syncpoint
