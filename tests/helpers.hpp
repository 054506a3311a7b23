// Small helpers the test files share: a file's bytes, and a shell command's
// exit status and output.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace syncpoint::testing {

/// The file's bytes ("" if it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct command_result {
  int status;          // the exit status, -1 if it did not exit normally
  std::string output;  // stdout and stderr
};

/// Runs `cmd` with sh and waits for it (status -1 if it could not start).
inline command_result run_shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr)
    return {-1, "cannot start: " + cmd};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace syncpoint::testing
