#include "tests/process.hpp"

#include <fcntl.h>
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
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0)
    throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    // A child must not inherit blocked signals from a test thread.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

process::~process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

std::string process::out() const { return slurp(out_path_); }
std::string process::err() const { return slurp(err_path_); }

bool process::running() {
  if (status_ != -1 || pid_ <= 0)
    return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

bool process::wait_for(const std::string& needle, std::chrono::milliseconds timeout, bool in_err) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if ((in_err ? err() : out()).find(needle) != std::string::npos)
      return true;
    if (!running() || std::chrono::steady_clock::now() > deadline)
      return (in_err ? err() : out()).find(needle) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int process::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status_))
    return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_))
    return 128 + WTERMSIG(status_);
  return -1;
}

void process::signal(int sig) {
  if (running())
    ::kill(pid_, sig);
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
