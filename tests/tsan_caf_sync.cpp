// ThreadSanitizer builds only: tell TSan where CAF's mailboxes synchronize.
//
// Debian's libcaf_core is not instrumented, so TSan cannot see the atomics by
// which a message (and an actor's state) passes from one thread to another, and
// every hand-off looks like a race. This file interposes the CAF functions a
// message and an actor go through, and annotates them:
//  - enqueue (scheduled and blocking actors) and launch release on the
//    receiver: all the sender (or spawner) did before happens before
//  - activate (each resume, and the actor's initialization), consume, a
//    blocking receive's visitor, and cleanup (which drains the mailbox when
//    the actor ends), which acquire on the receiver and release when they
//    return, so that the next message, perhaps on another scheduler thread,
//    sees the state the last one left
//  - the reference drops of an actor's control block and of a message's data
//    (ref_counted), acq_rel as CAF's own, so that the thread that frees either
//    sees what the others did with it.
// These are the edges CAF guarantees, no more: a race between two actors that
// share memory without a message, or a sender that writes what it has sent, is
// still reported (tests/tsan_canary.cpp proves both in every TSan run).
//
// Interposition works because libcaf_core binds these functions through its
// dynamic symbol table (R_X86_64_64 relocations in its vtables, calls through
// its PLT, no -Bsymbolic): the executable's definitions below come first, and
// call CAF's through dlsym(RTLD_NEXT). docs/hardening.md says more.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include <sanitizer/tsan_interface.h>

#include <caf/actor_control_block.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/ref_counted.hpp>
#include <caf/scheduled_actor.hpp>

namespace {

template <class Fn>
Fn next_definition(const char* symbol) {
  void* fn = dlsym(RTLD_NEXT, symbol);
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_caf_sync: libcaf_core has no %s\n", symbol);
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// Runs CAF's `fn` as a step of `actor`: it sees what was released to the actor
// before (a message's sender, the actor's previous step on another thread),
// and what it does is released to the actor's next step.
template <class Fn, class... Args>
auto as_step_of(void* actor, Fn fn, Args&&... args) {
  __tsan_acquire(actor);
  auto result = fn(std::forward<Args>(args)...);
  __tsan_release(actor);
  return result;
}

}  // namespace

#define SYNCPOINT_INTERPOSE __attribute__((visibility("default")))

namespace caf {

SYNCPOINT_INTERPOSE void scheduled_actor::enqueue(mailbox_element_ptr x, execution_unit* eu) {
  using fn = void (*)(scheduled_actor*, mailbox_element_ptr, execution_unit*);
  static const fn caf_enqueue = next_definition<fn>(
    "_ZN3caf15scheduled_actor7enqueueESt10unique_ptrINS_15mailbox_elementENS_6detail8disposerEEPNS_14execution_unitE");
  __tsan_release(this);
  caf_enqueue(this, std::move(x), eu);
}

SYNCPOINT_INTERPOSE void scheduled_actor::launch(execution_unit* eu, bool lazy, bool hide) {
  using fn = void (*)(scheduled_actor*, execution_unit*, bool, bool);
  static const fn caf_launch =
    next_definition<fn>("_ZN3caf15scheduled_actor6launchEPNS_14execution_unitEbb");
  __tsan_release(this);
  caf_launch(this, eu, lazy, hide);
}

SYNCPOINT_INTERPOSE bool scheduled_actor::activate(execution_unit* ctx) {
  using fn = bool (*)(scheduled_actor*, execution_unit*);
  static const fn caf_activate =
    next_definition<fn>("_ZN3caf15scheduled_actor8activateEPNS_14execution_unitE");
  return as_step_of(this, caf_activate, this, ctx);
}

SYNCPOINT_INTERPOSE invoke_message_result scheduled_actor::consume(mailbox_element& x) {
  using fn = invoke_message_result (*)(scheduled_actor*, mailbox_element&);
  static const fn caf_consume =
    next_definition<fn>("_ZN3caf15scheduled_actor7consumeERNS_15mailbox_elementE");
  return as_step_of(this, caf_consume, this, x);
}

// An actor that ends drains its mailbox in cleanup, destroying messages
// enqueued after its last consume (an exit message sent while it fails, say):
// closing the mailbox takes what every enqueue released.
SYNCPOINT_INTERPOSE bool scheduled_actor::cleanup(error&& fail_state, execution_unit* host) {
  using fn = bool (*)(scheduled_actor*, error&&, execution_unit*);
  static const fn caf_cleanup = next_definition<fn>(
    "_ZN3caf15scheduled_actor7cleanupEONS_5errorEPNS_14execution_unitE");
  return as_step_of(this, caf_cleanup, this, std::move(fail_state), host);
}

SYNCPOINT_INTERPOSE bool blocking_actor::cleanup(error&& fail_state, execution_unit* host) {
  using fn = bool (*)(blocking_actor*, error&&, execution_unit*);
  static const fn caf_cleanup = next_definition<fn>(
    "_ZN3caf14blocking_actor7cleanupEONS_5errorEPNS_14execution_unitE");
  return as_step_of(this, caf_cleanup, this, std::move(fail_state), host);
}

SYNCPOINT_INTERPOSE void blocking_actor::enqueue(mailbox_element_ptr x, execution_unit* eu) {
  using fn = void (*)(blocking_actor*, mailbox_element_ptr, execution_unit*);
  static const fn caf_enqueue = next_definition<fn>(
    "_ZN3caf14blocking_actor7enqueueESt10unique_ptrINS_15mailbox_elementENS_6detail8disposerEEPNS_14execution_unitE");
  __tsan_release(this);
  caf_enqueue(this, std::move(x), eu);
}

SYNCPOINT_INTERPOSE intrusive::task_result blocking_actor::mailbox_visitor::operator()(mailbox_element& x) {
  using fn = intrusive::task_result (*)(mailbox_visitor*, mailbox_element&);
  static const fn caf_visit = next_definition<fn>(
    "_ZN3caf14blocking_actor15mailbox_visitorclERNS_15mailbox_elementE");
  return as_step_of(self, caf_visit, this, x);
}

SYNCPOINT_INTERPOSE mailbox_element_ptr blocking_actor::dequeue() {
  using fn = mailbox_element_ptr (*)(blocking_actor*);
  static const fn caf_dequeue = next_definition<fn>("_ZN3caf14blocking_actor7dequeueEv");
  auto x = caf_dequeue(this);
  __tsan_acquire(this);
  return x;
}

// An actor's control block is freed by whichever thread drops the last
// reference. CAF counts references with acq_rel decrements inside the library;
// here each decrement is a release and an acquire on the block, as they are.
SYNCPOINT_INTERPOSE void intrusive_ptr_release(actor_control_block* x) {
  using fn = void (*)(actor_control_block*);
  static const fn caf_release =
    next_definition<fn>("_ZN3caf21intrusive_ptr_releaseEPNS_19actor_control_blockE");
  __tsan_release(x);
  __tsan_acquire(x);
  caf_release(x);
}

SYNCPOINT_INTERPOSE void intrusive_ptr_release_weak(actor_control_block* x) {
  using fn = void (*)(actor_control_block*);
  static const fn caf_release_weak =
    next_definition<fn>("_ZN3caf26intrusive_ptr_release_weakEPNS_19actor_control_blockE");
  __tsan_release(x);
  __tsan_acquire(x);
  caf_release_weak(x);
}

// A message's data (and an error's context, a message too) is shared between
// copies and freed by whichever thread drops the last reference, with CAF's
// acq_rel decrement inside the library: as for the control block, each
// decrement is a release and an acquire on the object. Without it, a reply
// read by the asker and freed later by the replier's copy on another thread
// looked like a race (a data plane test, once in a fresh-clone CI run).
SYNCPOINT_INTERPOSE void ref_counted::deref() const noexcept {
  using fn = void (*)(const ref_counted*);
  static const fn caf_deref = next_definition<fn>("_ZNK3caf11ref_counted5derefEv");
  auto* self = const_cast<ref_counted*>(this);
  __tsan_release(self);
  __tsan_acquire(self);
  caf_deref(this);
}

}  // namespace caf

// What libcaf_core does inside itself stays out of the reports: its scheduler
// queues allocate and free nodes under spinlocks TSan cannot see. Its mutexes
// still synchronize (called_from_lib ignores memory accesses, not locks).
extern "C" SYNCPOINT_INTERPOSE const char* __tsan_default_suppressions() {
  return "called_from_lib:libcaf_core.so\n";
}
