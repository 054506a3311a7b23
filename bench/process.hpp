// Child processes for tests that run the real `syncpoint` binary (on
// Boost.Process): output goes to files, every wait has a deadline, and
// whatever is still running when the handle goes is killed (SIGKILL) and
// reaped, so nothing outlives a test.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace boost::process {
class child;
}

namespace syncpoint::testing {

/// A fresh empty directory under /tmp, removed with the object.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

class process {
 public:
  /// Starts argv[0] with the rest as arguments; stdout and stderr go to
  /// DIR/NAME.out and DIR/NAME.err.
  process(const std::vector<std::string>& argv, const std::string& dir, const std::string& name);
  ~process();
  process(const process&) = delete;
  process& operator=(const process&) = delete;

  pid_t pid() const;
  std::string out() const;
  std::string err() const;

  /// Waits until a whole line of stdout (or stderr) holds `needle`, or the
  /// process ends, or the time is up; true if it appeared.
  bool wait_for(const std::string& needle, std::chrono::milliseconds timeout, bool in_err = false);

  /// Waits until a whole line of stderr (or stdout) starting at byte `from`
  /// or later satisfies `match`, or the process ends, or the time is up; the
  /// offset just past that line, or npos.
  size_t wait_for_line(const std::function<bool(const std::string&)>& match, std::chrono::milliseconds timeout,
                       bool in_err = true, size_t from = 0);

  /// Waits for the exit; the exit status, 128+signal if killed by one, or -1
  /// if it was still running at the deadline (it is then killed).
  int wait(std::chrono::milliseconds timeout);

  void signal(int sig);
  bool running();

 private:
  std::unique_ptr<boost::process::child> child_;  // Boost.Process starts and reaps it
  std::string out_path_, err_path_;
};

/// The path of the syncpoint binary under test.
std::string syncpoint_binary();

/// The port a head printed ("listening on HOST:PORT"), or 0.
int head_port(const process& head);

}  // namespace syncpoint::testing
