#include "protocols/elastic_bsp/zipline.hpp"

#include <algorithm>
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

// Merges the n ascending rows in (time, worker) order with a loser tree:
// log2(n) comparisons per point and no sorting of all n*R points.
class row_merger {
 public:
  explicit row_merger(const zipline_matrix& m) : m_(m), pos_(m.n, 0) {
    size_t k = 1;
    while (k < m.n)
      k *= 2;
    k_ = k;
    head_.assign(k, inf);  // padding leaves never win
    for (size_t i = 0; i < m.n; ++i)
      head_[i] = m.at(i, 0);
    tree_.assign(k, 0);
    // Build bottom-up: winners travel up, losers stay in the nodes.
    std::vector<uint32_t> winner(2 * k);
    for (size_t i = 0; i < k; ++i)
      winner[k + i] = static_cast<uint32_t>(i);
    for (size_t node = k - 1; node >= 1; --node) {
      auto a = winner[2 * node], b = winner[2 * node + 1];
      bool a_wins = less(a, b);
      winner[node] = a_wins ? a : b;
      tree_[node] = a_wins ? b : a;
    }
    tree_[0] = winner[1];
  }

  bool done() const { return key(tree_[0]) == inf; }

  /// The next point in (time, worker) order.
  point pop() {
    uint32_t w = tree_[0];
    point p{head_[w], w, pos_[w]};
    ++pos_[w];
    head_[w] = pos_[w] < m_.R ? m_.at(w, pos_[w]) : inf;
    // Replay the leaf's path against the stored losers.
    // Written without branches: the comparisons are data-dependent coin flips.
    uint32_t cur = w;
    for (size_t node = (k_ + w) / 2; node >= 1; node /= 2) {
      uint32_t other = tree_[node];
      uint32_t mask = 0u - static_cast<uint32_t>(less(other, cur));  // all ones if other wins
      tree_[node] = (cur & mask) | (other & ~mask);
      cur = (other & mask) | (cur & ~mask);
    }
    tree_[0] = cur;
    return p;
  }

 private:
  static constexpr double inf = std::numeric_limits<double>::infinity();
  double key(uint32_t w) const { return head_[w]; }
  bool less(uint32_t a, uint32_t b) const {  // bitwise, not short-circuit: no branches
    double ka = key(a), kb = key(b);
    return (ka < kb) | ((ka == kb) & (a < b));
  }

  const zipline_matrix& m_;
  std::vector<uint32_t> pos_;
  std::vector<double> head_;  // each row's next time: the tree reads only this
  size_t k_ = 1;
  std::vector<uint32_t> tree_;  // [0]: the winner; [1..k): losers
};

// The first of `n` (>= 1) time-ordered points with time >= t, or one past the
// last. Branch-free halving: the comparisons are unpredictable.
const point* lower_bound(const point* first, size_t n, double t) {
  while (n > 1) {
    size_t half = n / 2;
    first += static_cast<size_t>(first[half - 1].t < t) * half;
    n -= half;
  }
  return first + (first->t < t);
}

// zipline-opt-bs: the window is an array in time order (every point enters at
// the back) in which a replaced point is marked dead, the front skips dead
// points, and the array is compacted when the dead outnumber the living, so
// it holds O(n) entries. A worker's previous point is found by binary search
// on its time, read from M.
zipline_result sweep_binary_search(const zipline_matrix& m) {
  std::vector<point> win;
  std::vector<char> dead;
  win.reserve(4 * m.n + 4);
  dead.reserve(4 * m.n + 4);
  std::vector<int64_t> last_r(m.n, -1);
  size_t covered = 0;
  size_t front = 0;
  best_tracker best;
  row_merger merge(m);
  while (!merge.done()) {
    point p = merge.pop();
    if (last_r[p.worker] >= 0) {
      double old_t = m.at(p.worker, static_cast<size_t>(last_r[p.worker]));
      const point* it = lower_bound(win.data() + front, win.size() - front, old_t);
      while (it->worker != p.worker || it->r != last_r[p.worker])  // equal times: step to ours
        ++it;
      dead[static_cast<size_t>(it - win.data())] = 1;
    } else {
      ++covered;
    }
    last_r[p.worker] = p.r;
    win.push_back(p);
    dead.push_back(0);
    while (dead[front])
      ++front;
    if (win.size() - front > 2 * covered + 16) {  // compact: drop the dead
      size_t out = 0;
      for (size_t i = front; i < win.size(); ++i)
        if (!dead[i])
          win[out++] = win[i];
      win.resize(out);
      dead.assign(out, 0);
      front = 0;
    }
    if (covered == m.n)
      best.offer(win[front].t, p.t);
    // The window's front is a row's last point: that row has nothing later,
    // so every later window starts there or earlier while its end moves on,
    // and no later span is smaller (the textbook's stop when the minimum's
    // list is exhausted).
    if (covered == m.n && win[front].r + 1 == m.R)
      break;
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
