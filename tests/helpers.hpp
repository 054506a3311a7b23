// Small helpers the test files share: a temporary folder, a file's bytes, a shell command's
// exit status and output, a loopback port that refuses or ignores, and what a refusal said.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace syncpoint::testing {

/// The message of the config_error `f` throws (a std::invalid_argument: this
/// header is the bench's too, which does not see syncpoint's), or "not refused".
///
///   CHECK(refusal([] { expand_nodelist("n[1-"); }).find("a '[' with no ']'") != std::string::npos);
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "not refused";
}

/// A folder under the system's temp directory, `name` plus this process's id,
/// empty at first and removed with everything in it at the end.
struct temp_folder {
  std::filesystem::path path;
  explicit temp_folder(const std::string& name)
    : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
  }
  ~temp_folder() { std::filesystem::remove_all(path); }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
};

/// Each number as 4 big-endian bytes: IDX headers.
inline std::vector<unsigned char> be32(std::vector<uint32_t> xs) {
  std::vector<unsigned char> out;
  for (auto x : xs)
    for (int s = 24; s >= 0; s -= 8)
      out.push_back(static_cast<unsigned char>(x >> s));
  return out;
}

/// A small IDX data set in `dir` (200 training and 50 test images of 28x28,
/// 3 classes), as --dataset idx --data DIR reads it.
inline void write_idx_files(const std::filesystem::path& dir) {
  auto write = [](const std::filesystem::path& p, std::vector<unsigned char> bytes, size_t body, int mod) {
    for (size_t i = 0; i < body; ++i)
      bytes.push_back(static_cast<unsigned char>(mod ? i % static_cast<size_t>(mod) : (i * 37) % 251));
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
  };
  write(dir / "train-images-idx3-ubyte", be32({0x0803, 200, 28, 28}), 200 * 784, 0);
  write(dir / "train-labels-idx1-ubyte", be32({0x0801, 200}), 200, 3);
  write(dir / "t10k-images-idx3-ubyte", be32({0x0803, 50, 28, 28}), 50 * 784, 0);
  write(dir / "t10k-labels-idx1-ubyte", be32({0x0801, 50}), 50, 3);
}

/// The same four files in `dir` as named pipes that nobody writes: a run that
/// reads them waits there until the test lets it go.
inline void make_idx_pipes(const std::filesystem::path& dir) {
  for (auto* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                     "t10k-labels-idx1-ubyte"})
    if (mkfifo((dir / name).c_str(), 0644) != 0)
      throw std::runtime_error("mkfifo failed in " + dir.string());
}

/// The file's bytes ("" if it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// How many times `what` occurs in `s`.
inline size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1))
    ++n;
  return n;
}

/// The cells after the label cell of the comparison page's table row for
/// `label`, as HTML ("0.8512", or over seeds "0.8512<small ...>...</small>");
/// empty when the page has no such row.
inline std::vector<std::string> comparison_row(const std::string& page, const std::string& label) {
  auto start = page.find("<table class='comparison");
  if (start == std::string::npos)
    return {};
  auto table = page.substr(start, page.find("</table>", start) - start);
  auto at = table.find("</i>" + label + "</td>");
  if (at == std::string::npos)
    return {};
  auto row = table.substr(at, table.find("</tr>", at) - at);
  std::vector<std::string> cells;
  std::regex cell("<td[^>]*>(.*?)</td>");
  for (std::sregex_iterator it(row.begin(), row.end(), cell), end; it != end; ++it)
    cells.push_back((*it)[1]);
  return cells;
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

/// A TCP socket on a free loopback port, closed with the object. Listening, it
/// accepts connections and never answers; not listening, connections to it are
/// refused, and no other program takes the port meanwhile.
///
///   loopback_socket silent(true);
///   run("status --head " + silent.address());   // "no syncpoint head answered"
class loopback_socket {
 public:
  explicit loopback_socket(bool listening) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
          (!listening || listen(fd_, 8) == 0) &&
          getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    port_ = ntohs(addr.sin_port);
  }
  ~loopback_socket() {
    if (fd_ >= 0)
      close(fd_);
  }
  loopback_socket(const loopback_socket&) = delete;
  loopback_socket& operator=(const loopback_socket&) = delete;
  bool ok() const { return ok_; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
  bool ok_ = false;
};

}  // namespace syncpoint::testing
