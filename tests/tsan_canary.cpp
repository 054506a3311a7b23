// ThreadSanitizer builds only: proof that tests/tsan_caf_sync.cpp's edges hide
// nothing a message does not order. Run with one argument:
//   ordered        the sender writes a buffer, then sends it; the receiver reads it.
//                  TSan must stay silent.
//   write-after    the sender writes the buffer again after the send. TSan must
//                  report a data race.
//   shared         two actors bump one counter with no message between them.
//                  TSan must report a data race.
// CMakeLists.txt runs all three as tests of the TSan build.
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

namespace {

using buffer = std::vector<int>;
using shared_buffer = std::shared_ptr<buffer>;

}  // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(shared_buffer)  // stays in this process

namespace {

// write-after: the reader reads only once the sender has written again. The
// flag is relaxed, which orders nothing for TSan: without it, a reader that
// ran before the second write could be ordered before it by a lock inside the
// scheduler, and TSan rightly stayed silent (CI saw "sum 2" once).
std::atomic<bool> written_again{true};

caf::behavior reader(caf::event_based_actor*) {
  return {[](const shared_buffer& b) {
    while (!written_again.load(std::memory_order_relaxed))
      std::this_thread::yield();
    return (*b)[0] + (*b)[b->size() - 1];
  }};
}

long counter = 0;  // deliberately shared without a message

// shared: each bumper starts only once both are in their handlers. The count
// is relaxed, which orders nothing for TSan: without it, one bumper could
// finish before the other began and be ordered before it by a lock inside the
// scheduler, and TSan rightly stayed silent (about 1 run in 50).
std::atomic<int> bumpers_in{0};

caf::behavior bumper(caf::event_based_actor*) {
  return {[](int times) {
    bumpers_in.fetch_add(1, std::memory_order_relaxed);
    while (bumpers_in.load(std::memory_order_relaxed) < 2)
      std::this_thread::yield();
    for (int i = 0; i < times; ++i)
      ++counter;
    return times;
  }};
}

int run(caf::actor_system& sys, const std::string& mode) {
  caf::scoped_actor self{sys};
  if (mode == "shared") {
    // Detached: each on a thread of its own, so that the race is between threads.
    auto a = sys.spawn<caf::detached>(bumper);
    auto b = sys.spawn<caf::detached>(bumper);
    self->send(a, 100000);
    self->send(b, 100000);
    for (int i = 0; i < 2; ++i)
      self->receive([](int) {});
    std::printf("counter %ld\n", counter);
    return 0;
  }
  auto r = sys.spawn(reader);
  auto b = std::make_shared<buffer>(1024, 1);
  if (mode == "write-after")
    written_again = false;
  self->send(r, b);
  if (mode == "write-after") {
    for (auto& x : *b)
      x = 2;
    written_again.store(true, std::memory_order_relaxed);
  } else if (mode != "ordered") {
    std::fprintf(stderr, "tsan_canary: unknown mode '%s' (ordered, write-after, shared)\n", mode.c_str());
    return 2;
  }
  int sum = 0;
  self->receive([&](int s) { sum = s; });
  std::printf("sum %d\n", sum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tsan_canary ordered|write-after|shared\n");
    return 2;
  }
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  return run(sys, argv[1]);
}
