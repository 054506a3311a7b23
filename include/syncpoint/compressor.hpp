// Gradient compressors (docs/compression.md): what a worker's gradient turns
// into on its way to the PS, and how many bytes that takes on the wire. A
// compressor is one file under compressors/ that registers itself, as a
// protocol does; `--compress NAME[:R]` picks one for a job, and any protocol
// runs with any compressor.
//
// The worker keeps the error feedback (its residual: what compression lost
// last time is added to the next gradient), so a compressor is a pure
// function of the values and a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace syncpoint {

/// Turns a slice of a gradient into what the PS receives, in place, and says
/// how many bytes its encoding takes on the wire. One of a program's own:
///
/// ```cpp
/// class halve : public syncpoint::compressor {
///  public:
///   uint64_t compress(float* v, size_t n, uint64_t) const override {
///     for (size_t i = 0; i < n; ++i) v[i] = std::round(v[i] * 2) / 2;  // what the PS receives
///     return bytes(n);
///   }
///   uint64_t bytes(size_t n) const override { return n; }  // a byte a value
/// };
/// SYNCPOINT_REGISTER_COMPRESSOR("halve", "values to the nearest 0.5, a byte each", halve);
/// // then: cfg.compress = "halve";  (or --compress halve)
/// ```
class compressor {
 public:
  virtual ~compressor() = default;
  /// Replaces `values[0..n)` by their decompressed form (what the PS applies)
  /// and returns the bytes of the encoding. `seed` differs for every worker,
  /// iteration and slice and is the same when a run is repeated: a random
  /// compressor draws from it alone, so it keeps no state to checkpoint.
  virtual uint64_t compress(float* values, size_t n, uint64_t seed) const = 0;
  /// The bytes of the encoding of `n` values; the same for any values (so the
  /// link model can charge a push before it is made).
  virtual uint64_t bytes(size_t n) const = 0;
};

/// How many of `n` values a compressor that sends the share `ratio` keeps:
/// ceil(ratio n), at least one of a non-empty slice, at most n.
size_t values_kept(double ratio, size_t n);

/// Makes a compressor from its ratio (topk:R, randomk:R; 0 for one without).
using compressor_factory = std::function<std::unique_ptr<compressor>(double ratio)>;

/// Adds a compressor; `takes_ratio`: it is named NAME:R with R in (0, 1],
/// else NAME alone. Returns false (and says why on stderr) if the name is taken.
bool register_compressor(const std::string& name, const std::string& summary, bool takes_ratio,
                         compressor_factory factory);

/// The compressor `--compress` names ("none" and "" give nullptr: the
/// gradient goes as it is). Throws std::invalid_argument naming what is wrong:
/// an unknown name (listing the valid ones), a missing, extra or
/// out-of-range ratio.
std::unique_ptr<compressor> make_compressor(const std::string& spec);

/// Error feedback around `c` for one slice: `values` (a gradient) plus
/// `residual` (what compression left out before) is compressed in place into
/// what the PS receives, and `residual` becomes what was left out this time.
/// Returns the bytes of the encoding. This is what a worker does with each
/// slice it pushes under --compress.
///
/// ```cpp
/// std::vector<float> g{1, -3, 2, 0.5f}, e(4, 0.0f);
/// compress_with_feedback(*syncpoint::make_compressor("topk:0.5"), g.data(), e.data(), 4, 0);
/// // g == {0, -3, 2, 0}, e == {1, 0, 0, 0.5}
/// ```
uint64_t compress_with_feedback(const compressor& c, float* values, float* residual, size_t n, uint64_t seed);

/// Name -> one-line summary ("topk:R", ...), sorted, "none" included.
std::map<std::string, std::string> compressor_catalog();

}  // namespace syncpoint

/// Registers `Type` (constructible from a double ratio, or default
/// constructible when `takes_ratio` is false) at start-up.
#define SYNCPOINT_REGISTER_COMPRESSOR_WITH(name, summary, takes_ratio, Type, make)      \
  static const bool syncpoint_registered_compressor_##Type =                              \
    ::syncpoint::register_compressor(name, summary, takes_ratio, make)
#define SYNCPOINT_REGISTER_COMPRESSOR(name, summary, Type)                                 \
  SYNCPOINT_REGISTER_COMPRESSOR_WITH(name, summary, false, Type,                           \
    [](double) -> std::unique_ptr<::syncpoint::compressor> { return std::make_unique<Type>(); })
#define SYNCPOINT_REGISTER_RATIO_COMPRESSOR(name, summary, Type)                           \
  SYNCPOINT_REGISTER_COMPRESSOR_WITH(name, summary, true, Type,                            \
    [](double r) -> std::unique_ptr<::syncpoint::compressor> { return std::make_unique<Type>(r); })
