// A worker's pipeline state (actors/worker_step.cpp drives it): one value with the legal
// transitions as its only mutators.
//
//   worker_pipeline p;
//   p.compute_started();  p.compute_done();   // a gradient is ready
//   p.push_sent();                            // ... and in flight
//   p.compute_started();                      // overlapped: the next one meanwhile
//   p.push_answered();
#pragma once

#include <cassert>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace syncpoint {

// The pipeline: compute -> push -> reply (proceed) -> [pull] -> compute. Two
// lanes: the gradient (none, being computed, ready to push) and the link
// (idle, a push or a pull waiting for its reply). With `overlap` the next
// compute starts as soon as a push is sent, so every pair occurs. A worker
// taking local steps computes several gradients before one is ready to push
// (step_taken). The transitions below are the only way the state changes; each names the state
// it leaves. A worker restored from a checkpoint also waits for the
// coordinator's word before it asks again for the reply it waited for.
class worker_pipeline {
 public:
  enum class gradient : uint8_t { none, computing, ready };
  enum class link : uint8_t { idle, pushing, pulling };

  bool computing() const { return grad_ == gradient::computing; }
  bool ready() const { return grad_ == gradient::ready; }
  bool pushing() const { return net_ == link::pushing; }
  bool pulling() const { return net_ == link::pulling; }
  bool awaiting_resume() const { return awaiting_resume_; }

  void compute_started() { move(grad_, gradient::none, gradient::computing); }
  void compute_done() { move(grad_, gradient::computing, gradient::ready); }
  void step_taken() { move(grad_, gradient::computing, gradient::none); }  // a local step; more before the push
  void push_sent() {
    move(grad_, gradient::ready, gradient::none);
    move(net_, link::idle, link::pushing);
  }
  void push_answered() { move(net_, link::pushing, link::idle); }
  void pull_sent() { move(net_, link::idle, link::pulling); }
  void pull_answered() { move(net_, link::pulling, link::idle); }
  void resumed() { awaiting_resume_ = false; }

  /// The state a checkpoint recorded (its four flags); throws on a pair no worker can be in.
  static worker_pipeline restored(bool computing, bool ready, bool in_flight, bool pulling, int id) {
    if ((computing && ready) || (in_flight && pulling))
      throw std::invalid_argument("worker " + std::to_string(id) +
                                  ": the checkpoint's pipeline state is not one a worker can be in");
    worker_pipeline p;
    p.grad_ = computing ? gradient::computing : ready ? gradient::ready : gradient::none;
    p.net_ = in_flight ? link::pushing : pulling ? link::pulling : link::idle;
    p.awaiting_resume_ = true;
    return p;
  }

 private:
  template <class Lane>
  static void move(Lane& lane, Lane from, Lane to) {
    assert(lane == from && "a transition the worker's pipeline does not have");
    (void) from;
    lane = to;
  }

  gradient grad_ = gradient::none;
  link net_ = link::idle;
  bool awaiting_resume_ = false;
};

}  // namespace syncpoint
