// What the bulk channel's tests share (tests/test_bulk.cpp,
// tests/test_bulk_limits.cpp): an inbox of one side's frames and closes, a
// server that echoes every frame, and float patterns.
#pragma once

#include "runtime/cluster/dataplane/bulk.hpp"
#include "runtime/cluster/dataplane/shm_ring.hpp"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

namespace syncpoint::testing {

using namespace syncpoint::cluster;

// What one side of a connection received, waited for by the test thread.
struct inbox {
  std::mutex m;
  std::condition_variable cv;
  std::vector<bulk_frame> frames;
  std::vector<std::string> closed;
  std::vector<std::string> log;

  bulk_handler handler() {
    return {[this](bulk_frame&& f) {
              std::lock_guard<std::mutex> g(m);
              frames.push_back(std::move(f));
              cv.notify_all();
            },
            [this](const std::string& why) {
              std::lock_guard<std::mutex> g(m);
              closed.push_back(why);
              cv.notify_all();
            }};
  }
  std::function<void(const std::string&)> logger() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> g(m);
      log.push_back(line);
      cv.notify_all();
    };
  }
  // Waits (a deadline for hangs only) until `done` holds under the lock.
  template <class Pred>
  bool wait(Pred done) {
    std::unique_lock<std::mutex> g(m);
    return cv.wait_for(g, std::chrono::seconds(60), done);
  }
};

// A server whose every connection sends each frame back with kind + 1.
inline bulk_accept echo(std::string refuse_hello = "") {
  return [refuse_hello](const std::vector<char>& hello, std::shared_ptr<bulk_link> link)
           -> std::variant<bulk_handler, std::string> {
    if (!refuse_hello.empty() && std::string(hello.begin(), hello.end()) == refuse_hello)
      return "no such shard";
    std::weak_ptr<bulk_link> weak = link;
    return bulk_handler{[weak](bulk_frame&& f) {
                          auto back = std::make_shared<bulk_frame>(std::move(f));
                          if (auto l = weak.lock())
                            l->send(back->kind + 1, back->control, back->values.data(), back->values.size(), back);
                        },
                        {}};
  };
}

// Whether this machine lets two processes share memory (a /dev/shm with room, a boot id):
// where not, the bulk channel keeps every float on the wire, and the tests expect that.
inline bool shared_memory_here() {
  std::string error;
  return !machine_boot_id().empty() && shm_ring::create(1 << 20, error) != nullptr;
}

inline std::vector<float> pattern(size_t n, float seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = seed + static_cast<float>(i) * 0.25f;
  return v;
}

}  // namespace syncpoint::testing
