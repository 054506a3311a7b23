#include "bench/process.hpp"

#include "tests/helpers.hpp"

#include <boost/process.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace syncpoint::testing {

temp_dir::temp_dir() {
  std::string tmpl = "/tmp/syncpoint-test-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a temporary directory");
  path_ = tmpl;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

process::process(const std::vector<std::string>& argv, const std::string& dir, const std::string& name)
  : out_path_(dir + "/" + name + ".out"), err_path_(dir + "/" + name + ".err") {
  namespace bp = boost::process;
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  child_ = std::make_unique<bp::child>(argv.front(), bp::args(args), bp::std_out > out_path_,
                                       bp::std_err > err_path_, bp::std_in < bp::null);
}

process::~process() {
  if (running()) {
    ::kill(pid(), SIGKILL);
    child_->wait();
  }
}

pid_t process::pid() const {
  return child_->id();
}


std::string process::out() const { return slurp(out_path_); }
std::string process::err() const { return slurp(err_path_); }

bool process::running() {
  std::error_code ec;
  return child_->running(ec);  // reaps the child once it has exited
}

bool process::wait_for(const std::string& needle, std::chrono::milliseconds timeout, bool in_err) {
  return wait_for_line([&](const std::string& line) { return line.find(needle) != std::string::npos; }, timeout,
                       in_err) != std::string::npos;
}

// The files are polled: a child's output reaches them with no event to wait on.
size_t process::wait_for_line(const std::function<bool(const std::string&)>& match,
                              std::chrono::milliseconds timeout, bool in_err, size_t from) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t checked = from;  // lines before this offset did not match
  for (;;) {
    bool ended = !running();  // read after: what it wrote before it ended is in the file
    auto text = in_err ? err() : out();
    for (size_t eol; checked < text.size() && (eol = text.find('\n', checked)) != std::string::npos;
         checked = eol + 1)
      if (match(text.substr(checked, eol - checked)))
        return eol + 1;
    if (ended || std::chrono::steady_clock::now() > deadline)
      return std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int process::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid(), SIGKILL);
      child_->wait();
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int status = child_->native_exit_code();
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return -1;
}

void process::signal(int sig) {
  if (running())
    ::kill(pid(), sig);
}

std::string syncpoint_binary() {
  return SYNCPOINT_CLI;
}

int head_port(const process& head) {
  auto out = head.out();
  auto key = std::string("listening on ");
  auto at = out.find(key);
  if (at == std::string::npos)
    return 0;
  auto colon = out.find(':', at + key.size());
  auto eol = out.find('\n', colon);
  if (colon == std::string::npos || eol == std::string::npos)
    return 0;
  return std::atoi(out.substr(colon + 1, eol - colon - 1).c_str());
}

}  // namespace syncpoint::testing
