#include "runtime/records/durable_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace syncpoint {

durable_file::durable_file(std::string file, std::string tmp) : file_(std::move(file)), tmp_(std::move(tmp)) {
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    state_ = {false, std::strerror(errno)};
}

durable_file::~durable_file() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void durable_file::fail(int err) {
  state_.why = std::strerror(err);
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
}

void durable_file::append(const char* data, size_t size) {
  size_t done = 0;
  while (fd_ >= 0 && done < size) {
    auto n = ::write(fd_, data + done, size - done);
    if (n <= 0)
      return fail(n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
}

durable_write durable_file::commit() {
  if (fd_ < 0)
    return state_;
  bool synced = ::fsync(fd_) == 0;
  int sync_err = errno;
  ::close(fd_);
  fd_ = -1;
  if (!synced) {
    ::unlink(tmp_.c_str());
    return {true, std::strerror(sync_err)};
  }
  if (std::rename(tmp_.c_str(), file_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    return {true, std::strerror(err)};
  }
  auto dir = std::filesystem::path(file_).parent_path();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // the rename, durable
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

durable_write write_durably(const std::string& file, const std::string& tmp, const std::vector<const std::string*>& parts) {
  durable_file out(file, tmp);
  for (auto* bytes : parts)
    out.append(*bytes);
  return out.commit();
}

}  // namespace syncpoint
