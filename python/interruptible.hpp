// Running C++ work from Python so that Ctrl-C still works: the work runs on a
// thread of its own while the calling thread, with the GIL released, waits in
// slices of 100 ms and runs Python's signal handlers between them.
//
//   std::atomic<bool> interrupted{false};
//   auto r = run_interruptible([&] { return long_work(interrupted); }, interrupted);
//   // a Ctrl-C set `interrupted`; once long_work returned, KeyboardInterrupt is raised here
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <optional>
#include <thread>

namespace syncpoint::python {

/// Runs `work()` and returns what it returns (or throws what it threw). An
/// exception a signal handler raised while it ran (KeyboardInterrupt) sets
/// `interrupted`, and is raised once `work` has returned: work sees the flag
/// and ends early, cleanly, so that what it writes is whole.
template <class Work>
auto run_interruptible(Work work, std::atomic<bool>& interrupted) {
  namespace py = pybind11;
  using result = decltype(work());
  std::packaged_task<result()> task(std::move(work));
  auto done = task.get_future();
  std::optional<py::error_already_set> raised;
  {
    py::gil_scoped_release nogil;
    std::thread runner(std::move(task));
    while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0)
        continue;
      py::error_already_set e;  // takes the error Python set
      if (!raised)
        raised.emplace(std::move(e));
      interrupted = true;
    }
    runner.join();
  }
  if (raised)
    throw std::move(*raised);
  return done.get();
}

}  // namespace syncpoint::python
