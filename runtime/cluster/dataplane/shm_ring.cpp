// POSIX shared memory (shm_open, mmap) with one atomic counter for the
// reader's progress: the kernel and libc do the sharing; a ring is written
// by hand because Boost.Interprocess's queues copy per element and lock.
#include "runtime/cluster/dataplane/shm_ring.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace syncpoint::cluster {

namespace {

constexpr size_t header = 64;  // the reader's progress, on a cache line of its own
constexpr size_t page = 4096;
constexpr uint64_t max_ring = uint64_t{64} << 20;

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the reader's progress is shared between processes");

std::atomic<uint64_t>* consumed(char* base) {
  return reinterpret_cast<std::atomic<uint64_t>*>(base);
}

std::string random_name() {
  std::random_device rd;
  uint64_t r = (uint64_t{rd()} << 32) ^ rd();
  char buf[64];
  std::snprintf(buf, sizeof buf, "/syncpoint-bulk-%d-%016llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(r));
  return buf;
}

char* map(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

}  // namespace

size_t ring_capacity(uint64_t max_floats) {
  uint64_t frame = max_floats * sizeof(float);
  if (frame > max_ring)
    return 0;  // a frame the ring could never hold: no ring
  uint64_t room = frame <= (uint64_t{4} << 20) ? 2 * frame : frame;
  return static_cast<size_t>((room + page - 1) / page * page);
}

const std::string& machine_boot_id() {
  static const std::string id = [] {
    std::string line;
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::getline(in, line);
    return line;
  }();
  return id;
}

shm_ring::shm_ring(std::string name, char* base, size_t capacity, bool owner)
  : name_(std::move(name)), base_(base), capacity_(capacity), owner_(owner), linked_(owner) {}

std::unique_ptr<shm_ring> shm_ring::create(size_t capacity, std::string& error) {
  capacity = (capacity + page - 1) / page * page;
  if (capacity == 0) {
    error = "no room asked for";
    return nullptr;
  }
  auto name = random_name();
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    error = std::string("shm_open: ") + std::strerror(errno);
    return nullptr;
  }
  // The memory is set aside now: a full /dev/shm refuses here, not with a
  // SIGBUS at the first write past its size.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(header + capacity));
  char* base = rc == 0 ? map(fd, header + capacity) : nullptr;
  if (!base)
    error = rc != 0 ? std::string("no room in shared memory: ") + std::strerror(rc)
                    : std::string("mmap: ") + std::strerror(errno);
  close(fd);
  if (!base) {
    shm_unlink(name.c_str());
    return nullptr;
  }
  new (base) std::atomic<uint64_t>(0);
  return std::unique_ptr<shm_ring>(new shm_ring(std::move(name), base, capacity, true));
}

std::unique_ptr<shm_ring> shm_ring::open(const std::string& name, size_t capacity, std::string& error) {
  if (name.rfind("/syncpoint-bulk-", 0) != 0 || name.find('/', 1) != std::string::npos || capacity == 0 ||
      capacity % page != 0 || capacity > (size_t{64} << 20)) {
    error = "not a bulk ring";
    return nullptr;
  }
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    error = std::string("shm_open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  char* base = nullptr;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) != header + capacity ||
      st.st_uid != geteuid())
    error = "the ring is not what its writer said";  // (its name stays: not ours to remove)
  else if (!(base = map(fd, header + capacity)))
    error = std::string("mmap: ") + std::strerror(errno);
  close(fd);
  if (!base)
    return nullptr;
  shm_unlink(name.c_str());  // mapped by both now: the name has served
  return std::unique_ptr<shm_ring>(new shm_ring(name, base, capacity, false));
}

shm_ring::~shm_ring() {
  unlink();
  munmap(base_, header + capacity_);
}

void shm_ring::unlink() {
  if (owner_ && linked_)
    shm_unlink(name_.c_str());
  linked_ = false;
}

uint64_t shm_ring::place(uint64_t at, uint64_t bytes) const {
  uint64_t offset = at % capacity_;
  return offset + bytes <= capacity_ ? at : at - offset + capacity_;
}

char* shm_ring::reserve(uint64_t bytes) {
  if (bytes == 0 || bytes > capacity_)
    return nullptr;
  uint64_t start = place(position_, bytes);
  if (start + bytes - consumed(base_)->load(std::memory_order_acquire) > capacity_)
    return nullptr;  // the reader is still on what is there
  position_ = start + bytes;
  return base_ + header + start % capacity_;
}

bool shm_ring::take(uint64_t bytes, void* out) {
  if (bytes == 0 || bytes > capacity_)
    return false;
  uint64_t start = place(position_, bytes);
  std::memcpy(out, base_ + header + start % capacity_, bytes);
  position_ = start + bytes;
  consumed(base_)->store(position_, std::memory_order_release);
  return true;
}

}  // namespace syncpoint::cluster
