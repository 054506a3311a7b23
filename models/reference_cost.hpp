// The virtual clock's default cost of an iteration: the library's table of
// built-in models measured once, and a formula for the rest (docs/architecture.md,
// "Virtual time"). Not installed: a program sets job_config::iter_cost_ms.
//
//   std::string source;
//   double ms = syncpoint::reference_gradient_ms("mlp", 64, &source);  // 0.70, "model table"
#pragma once

#include <syncpoint/model.hpp>

#include <string>

namespace syncpoint {

// The cost of one gradient on `batch` examples on the reference core, in ms:
// the virtual clock's default per-iteration cost, so that a virtual run is
// reproducible from its command line. Built-in models come from a table
// measured once (one core of the development VM, LibTorch 1.13 with serial
// OpenBLAS, batch 64, examples of 1x28x28 and 10 classes: mlp 0.70 ms, cnn
// 3.80 ms, softmax 0.075 ms, resnet 76 ms; tinylm 67 ms at its default size
// and a context of 64, scaled by its parameters and context); any other model, or a built-in one
// made for another input `in`, costs like the mlp per parameter (a GPU worker
// or another shape: measure it, docs/architecture.md "Virtual time"). Linear
// in `batch`. `source` (if given) says which: "model table" or "parameter formula".
double reference_gradient_ms(const std::string& model, int batch, std::string* source = nullptr,
                             const model_input& in = {});

}  // namespace syncpoint
