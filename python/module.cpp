// The extension `syncpoint._syncpoint`: what the package syncpoint (python/syncpoint/) is built on.
// Its names begin with an underscore: Python code uses the package's, which check and wrap them.
#include "python/jobs.hpp"
#include "python/loops.hpp"
#include "python/models.hpp"
#include "python/protocols.hpp"

#include <pybind11/pybind11.h>

PYBIND11_MODULE(_syncpoint, m) {
  m.doc() = "syncpoint's C++ core; use the package `syncpoint`, which wraps it";
  syncpoint::python::bind_jobs(m);
  syncpoint::python::bind_models(m);
  syncpoint::python::bind_loops(m);
  syncpoint::python::bind_protocols(m);
}
