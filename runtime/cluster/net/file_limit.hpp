// How many connections a server may hold: each is a file descriptor, and the
// process's soft limit (often 1024) is lower than the caps it wants.
//
//   cap = connection_cap(opts.max_connections);  // 4096, or half the file limit
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstddef>

namespace syncpoint {

/// Raises the soft file limit to the hard one; returns the soft limit now.
inline rlim_t raise_file_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0)
    return RLIM_INFINITY;  // unknown: no cap of its own
  if (files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
  }
  return files.rlim_cur;
}

/// `wanted` connections, or half the (raised) file limit if that is fewer:
/// the other half stays for the rest of the process. At least 1.
inline size_t connection_cap(size_t wanted) {
  auto files = raise_file_limit();
  if (files == RLIM_INFINITY)
    return wanted;
  return std::max<size_t>(1, std::min<size_t>(wanted, static_cast<size_t>(files / 2)));
}

}  // namespace syncpoint
