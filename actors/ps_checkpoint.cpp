#include "actors/ps_rows.hpp"
#include "actors/ps_update.hpp"
#include "core/index_ranges.hpp"

#include <algorithm>
#include <stdexcept>

namespace syncpoint {

caf::result<proceed> resume_push(ps_ptr self, worker_id w, uint64_t iter) {
  if (w < 0)
    return make_error(sp_error::not_a_member, "a resumed push from an actor that is not a worker of this job");
  for (auto& [id, t] : self->state.in_transit)
    if (t.is_push && t.worker == w && t.push.iter == iter && !t.push_reply.pending()) {
      t.push_reply = self->make_response_promise<proceed>();
      return t.push_reply;
    }
  if (!self->state.coordinator)
    return make_error(sp_error::bad_input, "no push of worker " + std::to_string(w) + " to resume");
  // This shard has the slice; the coordinator holds the reply at the lead,
  // whose serving copy asks for it (a replica of the lead is asked too, for
  // a push on its link, and has nothing else to say).
  if (!is_lead(self->state) || !self->state.serving)
    return proceed{};
  return self->delegate(self->state.coordinator, pushed_atom::value, resume_atom::value, w, iter);
}

caf::result<weights> resume_pull(ps_ptr self, worker_id w) {
  if (w < 0)
    return make_error(sp_error::not_a_member, "a resumed pull from an actor that is not a worker of this job");
  auto& st = self->state;
  for (auto& [id, t] : st.in_transit)
    if (!t.is_push && t.worker == w && !t.pull_reply.pending()) {
      t.pull_reply = self->make_response_promise<weights>();
      return t.pull_reply;
    }
  for (auto& [version, p] : st.waiting_pulls)
    if (p.worker == w && !p.reply.pending()) {
      p.reply = self->make_response_promise<weights>();
      return p.reply;
    }
  return make_error(sp_error::bad_input, "no pull of worker " + std::to_string(w) + " to resume");
}

saved_ps save(const ps_state& st) {
  saved_ps s;
  s.w = *st.w;
  s.velocity = st.velocity;
  s.second = st.second;
  s.steps = st.steps;
  s.samples_applied = st.samples_applied;
  s.lr_traced = st.lr_traced;
  s.round_step = st.round_step;
  s.buffer = st.buffer;
  if (!st.held.empty())  // saved folded, as a later push would fold it
    for (size_t i = 0; i < s.buffer.size(); ++i)
      s.buffer[i] = round_sum(st.buffer[i], st.buffer_scale, st.held.data()[i], st.held_weight);
  s.worker_weight = st.worker_weight;
  s.visible = st.visible.vec();
  s.momentum = st.cfg.momentum;
  s.ramp_steps = st.ramp_steps;
  s.ramp_done = st.ramp_done;
  s.round_open = st.round_open;
  s.mean_staleness = st.mean_staleness;
  s.buffer_scale = st.held.empty() ? st.buffer_scale : 1.0f;
  s.buffer_weight = st.buffer_weight;
  s.buffer_taken = st.buffer_taken;
  s.buffer_share = st.buffer_share;
  s.round_staleness = st.round_staleness;
  for (auto& [version, samples] : st.samples_at_version)
    s.samples_at_version.insert(s.samples_at_version.end(), {version, samples});
  for (auto& b : st.buffered)
    s.buffered.push_back({b.worker, b.iter, b.base_version});
  s.round_ranges = st.round_ranges;
  s.version = st.version;
  s.visible_version = st.visible_version;
  s.mode = static_cast<uint8_t>(st.mode);
  for (auto& [version, p] : st.waiting_pulls)  // in the order they are answered
    s.waiting_pulls.push_back({version, p.worker, p.charged, p.asked});
  s.link_free_at = st.link.free_at();
  for (auto& [id, t] : st.in_transit) {
    saved_transfer x;
    x.id = id;
    x.worker = t.worker;
    x.is_push = t.is_push;
    if (t.is_push) {
      x.push = t.push;
    } else {
      x.version = t.out.version;
      x.values = t.out.values.vec();
      x.rows = t.out.rows;
    }
    s.in_transit.push_back(std::move(x));
  }
  s.next_transfer = st.next_transfer;
  for (auto& [key, g] : st.staged)
    s.staged.push_back(g);
  s.tables = save_tables(st);
  return s;
}

namespace {

// The shard's link: a replicated shard's copy takes its own back (a replica's
// carried pushes only); saved with another R, each copy takes the serving one's.
void restore_link(ps_state& st, const saved_ps& s, size_t n) {
  auto link = s.copy_links.size() == st.cfg.replicas + 1 && st.cfg.replicas > 0
                ? s.copy_links[st.cfg.copy]
                : saved_shard_link{s.link_free_at, s.in_transit, s.next_transfer, s.waiting_pulls, s.staged};
  st.waiting_pulls.clear();
  for (auto& p : link.waiting_pulls)  // equal versions keep their order: a multimap appends
    st.waiting_pulls.emplace(p.min_version, pending_pull{p.worker, {}, p.charged, p.asked});
  st.link.resume_at(link.link_free_at);
  st.in_transit.clear();
  for (auto& x : link.in_transit) {
    transit t;
    t.worker = x.worker;
    t.is_push = x.is_push;
    if (x.is_push)
      t.push = x.push;
    else
      t.out = weights{x.version, shared_floats(x.values), x.rows};
    st.in_transit.emplace(x.id, std::move(t));
  }
  st.next_transfer = link.next_transfer;
  st.staged.clear();
  for (auto& g : link.staged) {
    if (g.grad.size() != n)
      throw std::invalid_argument("the checkpoint's shard holds a slice of " + std::to_string(g.grad.size()) +
                                  " values of a push, the shard " + std::to_string(n));
    st.staged[{g.worker, g.iter}] = g;
  }
}

}  // namespace

void restore(ps_state& st, const saved_ps& s) {
  auto n = st.w->size();
  if (s.w.size() != n || s.velocity.size() != n)
    throw std::invalid_argument("the checkpoint's parameter server holds " + std::to_string(s.w.size()) +
                                " weights, the model has " + std::to_string(n));
  if (s.worker_weight.size() != st.worker_weight.size())
    throw std::invalid_argument("the checkpoint has " + std::to_string(s.worker_weight.size()) +
                                " workers, the job " + std::to_string(st.worker_weight.size()));
  *st.w = s.w;
  st.velocity = s.velocity;
  if (s.second.size() != (st.cfg.optimizer.adaptive() ? n : 0))
    throw std::invalid_argument("the checkpoint's parameter server holds " + std::to_string(s.second.size()) +
                                " second moments for an optimizer that needs " +
                                std::to_string(st.cfg.optimizer.adaptive() ? n : 0));
  st.second = s.second;
  st.steps = s.steps;
  st.samples_applied = s.samples_applied;
  st.lr_traced = s.lr_traced;
  st.lr = st.scheduled_lr();
  st.round_step = s.round_step;
  st.buffer = s.buffer;
  st.worker_weight = s.worker_weight;
  st.visible = shared_floats(s.visible);
  st.cfg.momentum = s.momentum;
  st.ramp_steps = s.ramp_steps;
  st.ramp_done = s.ramp_done;
  st.round_open = s.round_open;
  st.mean_staleness = s.mean_staleness;
  st.buffer_scale = s.buffer_scale;
  st.held = {};
  st.held_weight = 0;
  st.buffer_weight = s.buffer_weight;
  st.buffer_taken = s.buffer_taken;
  st.buffer_share = s.buffer_share;
  st.round_staleness = s.round_staleness;
  if (s.samples_at_version.size() % 2 != 0)
    throw std::invalid_argument("the checkpoint's parameter server holds an odd list of versions and samples");
  st.samples_at_version.clear();
  for (size_t i = 0; i < s.samples_at_version.size(); i += 2)
    st.samples_at_version.emplace_back(s.samples_at_version[i], s.samples_at_version[i + 1]);
  st.buffered.clear();
  for (auto& b : s.buffered)
    st.buffered.push_back({b.worker, b.iter, b.base_version});
  st.round_ranges = s.round_ranges;
  st.version = s.version;
  st.visible_version = s.visible_version;
  if (s.mode > static_cast<uint8_t>(ps_mode::delayed))
    throw std::invalid_argument("the checkpoint's parameter server mode is not one");
  st.mode = static_cast<ps_mode>(s.mode);
  restore_link(st, s, n);
  st.to_serve.clear();
  st.served_early.clear();
  restore_tables(st, s.tables);
}

namespace {

// The parts' vectors end to end (a part with none where others have some:
// zeros of its range's size).
std::vector<float> concat(const std::vector<saved_ps>& parts, std::vector<float> saved_ps::*field,
                          const std::vector<uint64_t>& bounds) {
  bool any = std::any_of(parts.begin(), parts.end(), [&](const saved_ps& p) { return !(p.*field).empty(); });
  std::vector<float> out;
  if (!any)
    return out;
  out.reserve(bounds.back());
  for (size_t k = 0; k < parts.size(); ++k) {
    auto& v = parts[k].*field;
    if (v.empty())
      out.resize(out.size() + (bounds[k + 1] - bounds[k]), 0.0f);
    else
      out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::vector<float> slice(const std::vector<float>& v, uint64_t begin, uint64_t end) {
  if (v.empty())
    return {};
  if (end > v.size())
    throw std::invalid_argument("the checkpoint's parameter server holds " + std::to_string(v.size()) +
                                " values, fewer than the model's " + std::to_string(end));
  return {v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end)};
}

saved_shard_link link_of(const saved_ps& s) {
  return {s.link_free_at, s.in_transit, s.next_transfer, s.waiting_pulls, s.staged};
}

}  // namespace

saved_ps merge_shards(std::vector<saved_ps> parts, const std::vector<uint64_t>& bounds) {
  if (parts.size() == 1)
    return std::move(parts.front());
  // Every shard saw the same pushes and control messages: the scalars, the
  // round's members and the versions are shard 0's.
  saved_ps whole = parts.front();
  for (auto field : {&saved_ps::w, &saved_ps::velocity, &saved_ps::round_step, &saved_ps::buffer,
                     &saved_ps::visible, &saved_ps::second})
    whole.*field = concat(parts, field, bounds);
  for (auto& p : parts)  // each shard's part of what the round carried
    add_ranges(whole.round_ranges, p.round_ranges);
  for (size_t k = 1; k < parts.size(); ++k)  // each shard's tables, tagged with the shard
    whole.tables.insert(whole.tables.end(), parts[k].tables.begin(), parts[k].tables.end());
  whole.shard_bounds = bounds;
  whole.shard_links.clear();
  for (auto& p : parts)
    whole.shard_links.push_back(link_of(p));
  return whole;
}

namespace {

std::vector<row_block> keys_now(const std::vector<saved_shard_link>& links, size_t saved_shards, const saved_pull& pull,
                                size_t shards, size_t k) {
  std::vector<row_block> out;
  for (size_t j = 0; j < saved_shards; ++j)
    for (auto& p : links[j].waiting_pulls)
      if (p.worker == pull.worker && p.min_version == pull.min_version)
        for (auto& b : p.asked) {
          while (out.size() <= b.table)
            out.push_back({static_cast<uint32_t>(out.size()), {}, {}});
          for (auto key : b.keys)
            if (row_shard(key, static_cast<uint32_t>(shards)) == k)
              out[b.table].keys.push_back(key);
        }
  for (auto& b : out)
    std::sort(b.keys.begin(), b.keys.end());
  return out;
}

}  // namespace

saved_ps shard_of(const saved_ps& whole, const std::vector<uint64_t>& bounds, size_t k) {
  bool same_shards = whole.shard_bounds.empty() ? bounds.size() == 2 : whole.shard_bounds == bounds;
  if (same_shards && bounds.size() == 2)
    return whole;
  saved_ps s = whole;
  for (auto field : {&saved_ps::w, &saved_ps::velocity, &saved_ps::round_step, &saved_ps::buffer,
                     &saved_ps::visible, &saved_ps::second})
    s.*field = slice(whole.*field, bounds[k], bounds[k + 1]);
  s.shard_bounds.clear();
  s.shard_links.clear();
  s.copy_links.clear();
  auto links = whole.shard_links.empty() ? std::vector<saved_shard_link>{link_of(whole)} : whole.shard_links;
  links.insert(links.end(), whole.copy_links.begin(), whole.copy_links.end());
  // Transfers in flight are on the links of the shards they were saved with
  // (a worker keeps the slices that had come, and asks the others again):
  // resumed with the same shards, each takes its own link back. Other shards
  // have other links, whose transfers would end at other times.
  auto saved_shards = whole.shard_links.empty() ? size_t{1} : whole.shard_links.size();
  if (!same_shards)
    for (auto& l : links)
      if (!l.in_transit.empty() || !l.staged.empty())
        throw std::invalid_argument(
          "the checkpoint holds transfers in flight on the link model's PS links, which are the links of its " +
          std::to_string(saved_shards) + " shard" + (saved_shards == 1 ? "" : "s") + "; resume it with --ps-shards " +
          std::to_string(saved_shards) + " (not " + std::to_string(bounds.size() - 1) + ")");
  // A held pull waits for a version every shard reaches alike: each shard holds it.
  saved_shard_link link;
  link.waiting_pulls = links.front().waiting_pulls;
  if (!same_shards)  // a sparse model's held pull: the keys of it this shard keeps now, from every saved shard's
    for (auto& p : link.waiting_pulls)
      p.asked = keys_now(links, saved_shards, p, bounds.size() - 1, k);
  for (size_t j = 0; j < saved_shards; ++j)
    link.link_free_at = std::max(link.link_free_at, links[j].link_free_at);
  if (same_shards) {
    link = whole.shard_links.at(k);
    auto per = whole.copy_links.size() / (bounds.size() - 1);  // each copy its own, R + 1 of them
    s.copy_links.assign(whole.copy_links.begin() + static_cast<std::ptrdiff_t>(k * per),
                        whole.copy_links.begin() + static_cast<std::ptrdiff_t>((k + 1) * per));
  }
  s.link_free_at = link.link_free_at;
  s.in_transit = std::move(link.in_transit);
  s.next_transfer = link.next_transfer;
  s.waiting_pulls = std::move(link.waiting_pulls);
  s.staged = std::move(link.staged);
  return s;
}

namespace {

// A resumed shard's copy 0 serves (the job spawns it so): it comes back from
// the saved copy that served, with that copy's link and the pulls on it, and
// the saved copy 0 comes back in the serving copy's slot. Any other copy
// comes back as itself.
size_t comes_back_from(size_t r, size_t serving) {
  return r == 0 ? serving : r == serving ? 0 : r;
}

}  // namespace

saved_ps merge_copies(std::vector<std::optional<saved_ps>> copies, const std::vector<uint64_t>& bounds,
                      const std::vector<uint32_t>& serving) {
  auto shards = bounds.size() - 1;
  auto per = serving.empty() ? size_t{1} : copies.size() / shards;
  if (copies.size() != shards * per || (!serving.empty() && serving.size() != shards))
    throw std::invalid_argument("the parameter server's copies do not match its shards");
  std::vector<saved_ps> parts;
  std::vector<saved_shard_link> links;
  for (size_t k = 0; k < shards; ++k) {
    auto serves = serving.empty() ? 0 : serving[k];
    auto& primary = copies.at(k * per + serves);
    if (!primary)
      throw std::invalid_argument("shard " + std::to_string(k) + "'s serving copy has no state");
    for (size_t r = 0; r < per && !serving.empty(); ++r) {
      auto& saved = copies[k * per + comes_back_from(r, serves)];
      links.push_back(link_of(saved ? *saved : *primary));
    }
    parts.push_back(std::move(*primary));
  }
  auto whole = merge_shards(std::move(parts), bounds);
  whole.copy_links = std::move(links);
  return whole;
}

std::vector<ps_actor> every_copy(const ps_group& ps) {
  if (ps.copies.empty())
    return ps.shards;
  std::vector<ps_actor> out;
  for (auto& copies : ps.copies)
    out.insert(out.end(), copies.begin(), copies.end());
  return out;
}

ps_actor serving_copy(const std::vector<ps_actor>& copies, const saved_coordinator& saved, size_t k, size_t shards) {
  auto per = copies.size() / std::max<size_t>(1, shards);
  auto serves = k < saved.serving.size() ? saved.serving[k] : 0;
  if (serves < per && copies[k * per + serves])
    return copies[k * per + serves];
  for (size_t r = 0; r < per; ++r)
    if (copies[k * per + r])
      return copies[k * per + r];
  return {};
}

uint32_t saved_copy_of(const saved_coordinator& saved, size_t k, size_t r, size_t per) {
  auto serving = k < saved.serving.size() ? saved.serving[k] : 0;
  bool same = per > 1 && !saved.serving.empty() && saved.copy_lost.size() == saved.serving.size() * per;
  auto from = comes_back_from(r, serving);
  return same && !saved.copy_lost[k * per + from] ? static_cast<uint32_t>(from) : serving;
}

}  // namespace syncpoint
