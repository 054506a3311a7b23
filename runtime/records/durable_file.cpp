#include "runtime/records/durable_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace syncpoint {

durable_write write_durably(const std::string& file, const std::string& tmp, const std::vector<const std::string*>& parts) {
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return {false, std::strerror(errno)};
  auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    return durable_write{true, std::strerror(err)};
  };
  for (auto* bytes : parts) {
    size_t done = 0;
    while (done < bytes->size()) {
      auto n = ::write(fd, bytes->data() + done, bytes->size() - done);
      if (n <= 0) {
        int err = n < 0 ? errno : ENOSPC;
        ::close(fd);
        return fail(err);
      }
      done += static_cast<size_t>(n);
    }
  }
  bool synced = ::fsync(fd) == 0;
  int sync_err = errno;
  ::close(fd);
  if (!synced)
    return fail(sync_err);
  if (std::rename(tmp.c_str(), file.c_str()) != 0)
    return fail(errno);
  auto dir = std::filesystem::path(file).parent_path();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // the rename, durable
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace syncpoint
