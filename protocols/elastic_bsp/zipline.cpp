#include "protocols/elastic_bsp/zipline.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <limits>
#include <stdexcept>

namespace syncpoint {

zipline_variant parse_zipline_variant(const std::string& name) {
  if (name == "zipline")
    return zipline_variant::plain;
  if (name == "zipline-opt")
    return zipline_variant::opt;
  if (name == "zipline-opt-bs")
    return zipline_variant::opt_bs;
  throw std::invalid_argument("unknown ZipLine variant '" + name +
                              "' (valid: zipline, zipline-opt, zipline-opt-bs)");
}

std::string to_string(zipline_variant v) {
  switch (v) {
    case zipline_variant::plain: return "zipline";
    case zipline_variant::opt: return "zipline-opt";
    case zipline_variant::opt_bs: return "zipline-opt-bs";
  }
  return "?";
}

void check_zipline_matrix(const zipline_matrix& m) {
  if (m.n == 0 || m.R == 0 || m.t.size() != m.n * m.R)
    throw std::invalid_argument("ZipLine needs at least one worker and one column");
  for (size_t i = 0; i < m.n; ++i)
    for (size_t r = 1; r < m.R; ++r)
      if (!(m.at(i, r) >= m.at(i, r - 1)))
        throw std::invalid_argument("row " + std::to_string(i) + " is not ascending at column " +
                                    std::to_string(r));
}

namespace {

struct point {
  double t;
  uint32_t worker;
  uint32_t r;
};

// The sweep finds the best (span, barrier) pair. For that pair, each worker's
// earliest column with barrier - M[i][r] <= span is inside the window, and
// choosing it for every worker gives the smallest min and then the
// lexicographically smallest choice (docs/elastic-bsp.md has the argument).
// The test is written as the subtraction, not as M[i][r] >= min: that is the
// comparison the span itself went through, so rounding cannot split the two.
zipline_result finish(const zipline_matrix& m, double best_span, double best_max) {
  zipline_result out;
  out.span = best_span;
  out.barrier = best_max;
  out.stops.resize(m.n);
  for (size_t i = 0; i < m.n; ++i) {
    auto row = m.t.begin() + static_cast<std::ptrdiff_t>(i * m.R);
    auto it = std::partition_point(row, row + static_cast<std::ptrdiff_t>(m.R),
                                   [&](double t) { return best_max - t > best_span; });
    out.stops[i] = static_cast<uint32_t>(it - row);
  }
  return out;
}

struct best_tracker {
  double span = std::numeric_limits<double>::infinity();
  double max = 0;
  // Points come in time order, so a later candidate never has a smaller max:
  // only a strictly smaller span replaces the best.
  void offer(double lo, double hi) {
    double s = hi - lo;
    if (s < span) {
      span = s;
      max = hi;
    }
  }
};

std::vector<point> sorted_points(const zipline_matrix& m) {
  std::vector<point> pts;
  pts.reserve(m.n * m.R);
  for (uint32_t i = 0; i < m.n; ++i)
    for (uint32_t r = 0; r < m.R; ++r)
      pts.push_back({m.at(i, r), i, r});
  std::sort(pts.begin(), pts.end(), [](const point& a, const point& b) {
    return a.t < b.t || (a.t == b.t && (a.worker < b.worker || (a.worker == b.worker && a.r < b.r)));
  });
  return pts;
}

// zipline and zipline-opt: the window is a time-ordered deque holding each
// worker's latest point.
zipline_result sweep_deque(const zipline_matrix& m, bool pop_front_shortcut) {
  auto pts = sorted_points(m);
  std::deque<point> window;
  std::vector<char> present(m.n, 0);
  size_t covered = 0;
  best_tracker best;
  for (auto& p : pts) {
    if (present[p.worker]) {
      if (pop_front_shortcut && window.front().worker == p.worker) {
        window.pop_front();
      } else {
        auto it = std::find_if(window.begin(), window.end(),
                               [&](const point& q) { return q.worker == p.worker; });
        window.erase(it);
      }
    } else {
      present[p.worker] = 1;
      ++covered;
    }
    window.push_back(p);
    if (covered == m.n)
      best.offer(window.front().t, p.t);
  }
  return finish(m, best.span, best.max);
}

// Merges the n ascending rows in (time, worker, column) order, a slab at a
// time: a slab is every point before the largest of the rows' next times (so
// every row but the one with that time gives at least one point), gathered row
// by row, in (worker, column) order, then sorted by time with a stable LSD
// radix sort on the times' bits. Ties keep the (worker, column) order, and no
// comparison depends on the data: on ElasticBSP's instances (n=1000, R=150)
// this is half the time of a loser tree's log2(n) comparisons per point
// (docs/performance.md).
class slab_merger {
 public:
  explicit slab_merger(const zipline_matrix& m) : m_(m), pos_(m.n, 0) {}

  bool done() {
    if (next_ == slab_.size())
      fill();
    return next_ == slab_.size();
  }

  /// The next point in (time, worker) order (after done() said there is one).
  point pop() {
    auto& e = slab_[next_++];
    return {time_of(e.key), e.worker, e.r};
  }

 private:
  struct entry {
    uint64_t key;  // the time's bits, ordered as the times are
    uint32_t worker, r;
  };

  static uint64_t key_of(double t) {
    t += 0.0;  // -0 is 0: equal times tie, whatever their sign
    uint64_t bits;
    std::memcpy(&bits, &t, sizeof bits);
    return bits >> 63 ? ~bits : bits | (uint64_t{1} << 63);
  }
  static double time_of(uint64_t key) {
    uint64_t bits = key >> 63 ? key & ~(uint64_t{1} << 63) : ~key;
    double t;
    std::memcpy(&t, &bits, sizeof t);
    return t;
  }

  void fill() {
    slab_.clear();
    next_ = 0;
    bool any = false;
    double horizon = 0;
    for (size_t i = 0; i < m_.n; ++i)
      if (pos_[i] < m_.R) {
        double t = m_.at(i, pos_[i]);
        horizon = any ? std::max(horizon, t) : t;
        any = true;
      }
    if (!any)
      return;
    take([&](double t) { return t < horizon; });
    if (slab_.empty())  // every row's next time is the horizon: take the points at it
      take([&](double t) { return t <= horizon; });
    sort();
  }

  template <class Before>
  void take(Before before) {
    for (uint32_t i = 0; i < m_.n; ++i) {
      auto& r = pos_[i];
      for (; r < m_.R && before(m_.at(i, r)); ++r)
        slab_.push_back({key_of(m_.at(i, r)), i, r});
    }
  }

  // Stable LSD radix sort by key, 8 bits a pass; a pass whose byte is the
  // same in every key (the sign and exponent, mostly) is skipped. Small slabs
  // (few workers) are sorted stably by comparison.
  void sort() {
    if (slab_.size() < 256) {  // below that the histograms cost more than comparisons
      std::stable_sort(slab_.begin(), slab_.end(), [](const entry& a, const entry& b) { return a.key < b.key; });
      return;
    }
    constexpr int passes = 8;
    std::array<std::array<uint32_t, 256>, passes> count{};
    for (auto& e : slab_)
      for (int d = 0; d < passes; ++d)
        ++count[d][(e.key >> (8 * d)) & 0xff];
    spare_.resize(slab_.size());
    for (int d = 0; d < passes; ++d) {
      auto& c = count[d];
      if (c[(slab_.front().key >> (8 * d)) & 0xff] == slab_.size())
        continue;
      uint32_t sum = 0;
      for (auto& x : c) {
        uint32_t k = x;
        x = sum;
        sum += k;
      }
      for (auto& e : slab_)
        spare_[c[(e.key >> (8 * d)) & 0xff]++] = e;
      slab_.swap(spare_);
    }
  }

  const zipline_matrix& m_;
  std::vector<uint32_t> pos_;
  std::vector<entry> slab_, spare_;
  size_t next_ = 0;
};

// zipline-opt-bs: the window is an array in time order (every point enters at
// the back). A point is live while it is its worker's latest (last_r says),
// so a replaced one needs no search: the front skips points that are no
// longer live, and the array drops them when they outnumber the living, so it
// holds O(n) entries. (The paper finds the replaced point by binary search on
// its time; knowing each worker's latest column makes that a lookup.)
zipline_result sweep_binary_search(const zipline_matrix& m) {
  struct entry {
    uint32_t worker, r;
  };
  std::vector<entry> win;
  win.reserve(4 * m.n + 32);
  std::vector<uint32_t> last_r(m.n, UINT32_MAX);
  auto live = [&](const entry& e) { return last_r[e.worker] == e.r; };
  size_t covered = 0;
  size_t front = 0;
  best_tracker best;
  slab_merger merge(m);
  while (!merge.done()) {
    point p = merge.pop();
    if (last_r[p.worker] == UINT32_MAX)
      ++covered;
    last_r[p.worker] = p.r;
    win.push_back({p.worker, p.r});
    while (!live(win[front]))
      ++front;
    if (win.size() - front > 2 * covered + 16) {  // compact: drop what is no longer live
      size_t out = 0;
      for (size_t i = front; i < win.size(); ++i)
        if (live(win[i]))
          win[out++] = win[i];
      win.resize(out);
      front = 0;
    }
    if (covered == m.n) {
      best.offer(m.at(win[front].worker, win[front].r), p.t);
      // The window's front is a row's last point: that row has nothing later,
      // so every later window starts there or earlier while its end moves on,
      // and no later span is smaller (the textbook's stop when the minimum's
      // list is exhausted).
      if (win[front].r + 1 == m.R)
        break;
    }
  }
  return finish(m, best.span, best.max);
}

}  // namespace

zipline_result zipline(const zipline_matrix& m, zipline_variant variant) {
  switch (variant) {
    case zipline_variant::plain: return sweep_deque(m, false);
    case zipline_variant::opt: return sweep_deque(m, true);
    case zipline_variant::opt_bs: return sweep_binary_search(m);
  }
  throw std::invalid_argument("unknown ZipLine variant");
}

zipline_result zipline_brute_force(const zipline_matrix& m) {
  std::vector<uint32_t> r(m.n, 0);
  zipline_result best;
  bool have = false;
  for (;;) {
    double lo = m.at(0, r[0]), hi = lo;
    for (size_t i = 1; i < m.n; ++i) {
      lo = std::min(lo, m.at(i, r[i]));
      hi = std::max(hi, m.at(i, r[i]));
    }
    double span = hi - lo;
    bool better = !have || span < best.span || (span == best.span && hi < best.barrier);
    if (!better && have && span == best.span && hi == best.barrier) {
      double cur_lo = m.at(0, best.stops[0]);
      for (size_t i = 1; i < m.n; ++i)
        cur_lo = std::min(cur_lo, m.at(i, best.stops[i]));
      better = lo < cur_lo || (lo == cur_lo && r < best.stops);
    }
    if (better) {
      best.span = span;
      best.barrier = hi;
      best.stops = r;
      have = true;
    }
    size_t i = 0;
    while (i < m.n && ++r[i] == m.R)
      r[i++] = 0;
    if (i == m.n)
      break;
  }
  return best;
}

}  // namespace syncpoint
