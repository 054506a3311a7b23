#include "runtime/records/checkpoint_file.hpp"

#include "runtime/records/cereal_inspect.hpp"
#include "runtime/records/checkpoint_cereal.hpp"
#include "runtime/records/durable_file.hpp"
#include <syncpoint/job_config.hpp>

#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/common.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace syncpoint {

namespace {

namespace fs = std::filesystem;

const std::string magic = "syncpoint-checkpoint";

uint32_t crc_of(const std::string& bytes) {
  return static_cast<uint32_t>(
    crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

// cereal writes to a std::ostream; an ostringstream grows by doubling and
// copies again on str(), which for a 64 MB model costs more than the disk.
// This one appends to a string reserved at the expected size.
class string_sink : public std::streambuf {
 public:
  explicit string_sink(std::string& out) : out_(out) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    out_.append(s, static_cast<size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (c != traits_type::eof())
      out_.push_back(static_cast<char>(c));
    return c;
  }

 private:
  std::string& out_;
};

// Reads from memory without copying it.
class memory_source : public std::streambuf {
 public:
  memory_source(const char* data, size_t size) {
    auto* p = const_cast<char*>(data);
    setg(p, p, p + size);
  }
  size_t consumed() const { return static_cast<size_t>(gptr() - eback()); }
};

// The weight vectors of a state, in a fixed order: where equal ones are pooled.
template <class State, class F>
void for_each_weights(State& s, F&& f) {
  f(s.ps.w);
  f(s.ps.visible);
  for (auto& t : s.ps.in_transit)
    if (!t.is_push)
      f(t.values);
  for (auto& w : s.workers)
    f(w.model);
}

// The payload: the state with each weight vector moved into a pool of
// distinct ones, and a reference per vector.
struct pooled_state {
  checkpoint_state s;
  std::vector<std::vector<float>> pool;
  std::vector<uint32_t> refs;

  template <class Archive>
  void serialize(Archive& ar) {
    cereal_fields(ar, s.time_ns, s.samples, s.settings, s.coordinator, s.ps, s.workers, s.timers, s.trace, pool, refs);
  }
};

// A cheap key for finding equal vectors (equality is then checked in full):
// the length and a few hundred values spread over the vector.
size_t sketch(const std::vector<float>& v) {
  size_t step = std::max<size_t>(1, v.size() / 256);
  size_t h = std::hash<size_t>{}(v.size());
  for (size_t i = 0; i < v.size(); i += step) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], sizeof bits);
    h = h * 1000003u ^ bits;
  }
  return h;
}

pooled_state pool_weights(checkpoint_state&& s) {
  pooled_state p;
  std::multimap<size_t, uint32_t> by_hash;
  for_each_weights(s, [&](std::vector<float>& v) {
    auto h = sketch(v);
    auto [from, to] = by_hash.equal_range(h);
    for (auto i = from; i != to; ++i)
      if (p.pool[i->second] == v) {
        p.refs.push_back(i->second);
        v = {};
        return;
      }
    auto ref = static_cast<uint32_t>(p.pool.size());
    by_hash.emplace(h, ref);
    p.refs.push_back(ref);
    p.pool.push_back(std::move(v));
    v = {};
  });
  p.s = std::move(s);
  return p;
}

[[noreturn]] void refuse(const std::string& file, const std::string& what) {
  throw config_error("checkpoint '" + file + "': " + what);
}

// Gives each weight vector its pooled value back; false if a reference is out of range.
bool unpool_weights(pooled_state& p) {
  size_t k = 0;
  bool ok = true;
  for_each_weights(p.s, [&](std::vector<float>& v) {
    if (k >= p.refs.size() || p.refs[k] >= p.pool.size())
      ok = false;
    else
      v = p.pool[p.refs[k]];
    ++k;
  });
  return ok && k == p.refs.size();
}

}  // namespace

std::string checkpoint_file_header(const checkpoint_header& head, const std::string& payload) {
  std::string header;
  string_sink sink(header);
  std::ostream out(&sink);
  cereal::PortableBinaryOutputArchive ar(out);
  uint32_t format = head.format;
  uint64_t length = payload.size();
  uint32_t crc = crc_of(payload);
  ar(magic, format, head, length, crc);
  return header;
}

namespace {

std::string serialized(const saved_rows& chunk) {
  std::string bytes;
  bytes.reserve(4 * (chunk.values.size() + chunk.first.size() + chunk.second.size()) +
                8 * (4 * chunk.keys.size() + 2 * chunk.sighted.size()) + 64);
  string_sink sink(bytes);
  std::ostream out(&sink);
  cereal::PortableBinaryOutputArchive ar(out);
  ar(chunk);
  return bytes;
}

// A chunk's frame: its length (0: the end) and CRC-32, little-endian.
std::string frame(uint64_t length, uint32_t crc) {
  std::string out(12, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  for (int i = 0; i < 4; ++i)
    out[static_cast<size_t>(8 + i)] = static_cast<char>((crc >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

struct checkpoint_stream::impl {
  std::string file;
  std::optional<durable_file> out;
};

checkpoint_stream::checkpoint_stream(const std::string& dir, checkpoint c) : impl_(std::make_unique<impl>()) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint-%012llu.bin", static_cast<unsigned long long>(c.state.samples));
  impl_->file = (fs::path(dir) / name).string();
  auto pooled = pool_weights(std::move(c.state));
  std::string payload;
  auto& ps = pooled.s.ps;
  size_t floats = ps.velocity.size() + ps.round_step.size() + ps.buffer.size();
  for (auto& v : pooled.pool)
    floats += v.size();
  for (auto& w : pooled.s.workers)
    floats += w.grad.size();
  for (auto& t : ps.in_transit)
    floats += t.push.grad.size();
  payload.reserve(4 * floats + 64 * pooled.s.trace.size() + pooled.s.coordinator.protocol_state.size() +
                  8192 * pooled.s.workers.size() + 1024);
  {
    string_sink sink(payload);
    std::ostream out(&sink);
    cereal::PortableBinaryOutputArchive ar(out);
    ar(pooled);
  }
  auto header = checkpoint_file_header(c.head, payload);
  impl_->out.emplace(impl_->file, (fs::path(dir) / ".checkpoint.tmp").string());
  impl_->out->append(header);
  impl_->out->append(payload);
}

checkpoint_stream::~checkpoint_stream() = default;

void checkpoint_stream::add(const saved_rows& chunk) {
  auto bytes = serialized(chunk);
  impl_->out->append(frame(bytes.size(), crc_of(bytes)));
  impl_->out->append(bytes);
}

std::string checkpoint_stream::commit() {
  auto& file = impl_->file;
  impl_->out->append(frame(0, 0));
  auto written = impl_->out->commit();
  if (!written.opened)
    throw config_error("cannot write checkpoint '" + file + "' (.checkpoint.tmp): " + written.why);
  if (!written.ok())
    throw config_error("cannot write checkpoint '" + file + "': " + written.why + " (the previous ones are intact)");
  return file;
}

std::string write_checkpoint(const std::string& dir, checkpoint c) {
  return checkpoint_stream(dir, std::move(c)).commit();
}

std::optional<std::pair<saved_rows, uint64_t>> read_row_chunk(const std::string& file, uint64_t at) {
  std::ifstream in(file, std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(at)))
    refuse(file, "its rows cannot be read");
  unsigned char head[12];
  if (!in.read(reinterpret_cast<char*>(head), sizeof head))
    refuse(file, "truncated (its rows end at byte " + std::to_string(at) + ", without the end mark)");
  uint64_t length = 0;
  uint32_t crc = 0;
  for (int i = 0; i < 8; ++i)
    length |= static_cast<uint64_t>(head[i]) << (8 * i);
  if (length == 0)
    return std::nullopt;
  for (int i = 0; i < 4; ++i)
    crc |= static_cast<uint32_t>(head[8 + i]) << (8 * i);
  std::error_code ec;
  auto size = std::filesystem::file_size(file, ec);
  if (ec || length > size || at + sizeof head + length > size)  // (never more memory than the file has bytes)
    refuse(file, "truncated (the chunk of its rows at byte " + std::to_string(at) + " ends early)");
  std::string bytes(static_cast<size_t>(length), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(length)))
    refuse(file, "truncated (the chunk of its rows at byte " + std::to_string(at) + " ends early)");
  if (crc_of(bytes) != crc)
    refuse(file, "corrupt (the checksum of a chunk of its rows does not match: the chunk at byte " +
                   std::to_string(at) + ")");
  saved_rows chunk;
  try {
    memory_source source(bytes.data(), bytes.size());
    std::istream stream(&source);
    input_bound bound(source);
    cereal::PortableBinaryInputArchive ar(stream);
    ar(chunk);
  } catch (const cereal::Exception& e) {
    refuse(file, "corrupt (the chunk of its rows at byte " + std::to_string(at) + ": " + e.what() + ")");
  }
  return std::make_pair(std::move(chunk), at + sizeof head + length);
}

void read_row_chunks(const std::string& file, uint64_t at, const std::function<void(const saved_rows&)>& take) {
  while (auto chunk = read_row_chunk(file, at)) {
    take(chunk->first);
    at = chunk->second;
  }
}

namespace {

// The header's checks; where the payload starts, and its length and CRC.
struct payload_span {
  size_t start = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
};

payload_span read_head(const char* data, size_t size, const std::string& file, const checkpoint_header& expect,
                       checkpoint_header& head) {
  memory_source header_source(data, size);
  std::istream stream(&header_source);
  payload_span span;
  try {
    input_bound bound(header_source);
    cereal::PortableBinaryInputArchive ar(stream);
    std::string m;
    // The magic is read by hand first: cereal would take a random file's first
    // bytes as a string length and try to allocate it.
    uint64_t magic_length = 0;
    ar(magic_length);
    if (magic_length != magic.size())
      refuse(file, "not a syncpoint checkpoint");
    m.resize(magic_length);
    ar(cereal::binary_data(&m[0], magic_length));
    if (m != magic)
      refuse(file, "not a syncpoint checkpoint");
    ar(head.format);
    if (head.format != checkpoint_format)
      refuse(file, "format version " + std::to_string(head.format) + ", but this build reads version " +
                     std::to_string(checkpoint_format));
    ar(head, span.length, span.crc);
  } catch (const cereal::Exception&) {
    refuse(file, "truncated (its header ends early)");
  }
  if (head.model != expect.model || head.parameters != expect.parameters)
    refuse(file, "it is of model '" + head.model + "' with " + std::to_string(head.parameters) +
                   " parameters, but the job's model is '" + expect.model + "' with " +
                   std::to_string(expect.parameters));
  if (head.protocol != expect.protocol)
    refuse(file, "it is of protocol '" + head.protocol + "', but the job's is '" + expect.protocol + "'");
  span.start = header_source.consumed();
  return span;
}

}  // namespace

checkpoint read_checkpoint(const std::string& file, const checkpoint_header& expect) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in)
    refuse(file, "cannot be opened");
  auto size = static_cast<uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  // The header first (it is short), then through the payload: the rows after it stay on disk.
  std::string bytes(static_cast<size_t>(std::min<uint64_t>(size, 1 << 16)), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    refuse(file, "cannot be read");
  checkpoint_header head;
  auto span = read_head(bytes.data(), bytes.size(), file, expect, head);
  auto through = std::min<uint64_t>(size, span.start + span.length);
  if (through > bytes.size()) {
    auto had = bytes.size();
    bytes.resize(static_cast<size_t>(through));
    if (!in.read(bytes.data() + had, static_cast<std::streamsize>(through - had)))
      refuse(file, "cannot be read");
  }
  auto c = parse_checkpoint(bytes, file, expect);
  read_row_chunks(file, c.state.rows_at, [](const saved_rows&) {});  // each chunk checked now, not mid-start
  return c;
}

checkpoint parse_checkpoint(const std::string& bytes, const std::string& file, const checkpoint_header& expect) {
  checkpoint c;
  auto span = read_head(bytes.data(), bytes.size(), file, expect, c.head);
  auto start = span.start;
  auto length = span.length;
  if (start > bytes.size() || bytes.size() - start < length)
    refuse(file, "truncated (" + std::to_string(bytes.size() - std::min(start, bytes.size())) + " of " +
                   std::to_string(length) + " payload bytes)");
  const char* payload = bytes.data() + start;
  if (crc32(0L, reinterpret_cast<const Bytef*>(payload), static_cast<uInt>(length)) != span.crc)
    refuse(file, "corrupt (its checksum does not match)");
  pooled_state pooled;
  try {
    memory_source payload_source(payload, static_cast<size_t>(length));
    std::istream ps(&payload_source);
    input_bound bound(payload_source);
    cereal::PortableBinaryInputArchive ar(ps);
    ar(pooled);
  } catch (const cereal::Exception& e) {
    refuse(file, std::string("corrupt (") + e.what() + ")");
  }
  if (!unpool_weights(pooled))
    refuse(file, "corrupt (a weight reference points nowhere)");
  c.state = std::move(pooled.s);
  if (c.state.ps.w.size() != expect.parameters || c.state.ps.velocity.size() != expect.parameters)
    refuse(file, "corrupt (" + std::to_string(c.state.ps.w.size()) + " weights for " +
                   std::to_string(expect.parameters) + " parameters)");
  c.state.rows_file = file;
  c.state.rows_at = start + length;
  return c;
}

std::string checkpoint_line(const std::string& protocol, int64_t time_ns, const std::string& file) {
  char t[48];
  std::snprintf(t, sizeof t, "] checkpoint at t=%.2fs: ", static_cast<double>(time_ns) * 1e-9);
  return "[" + protocol + t + file;
}

void prune_checkpoints(const std::string& dir, size_t keep) {
  if (keep == 0)
    return;
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.rfind("checkpoint-", 0) == 0 && it->path().extension() == ".bin")
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());  // by samples: the names are zero-padded
  for (size_t i = 0; i + keep < files.size(); ++i)
    fs::remove(files[i], ec);
}

std::string newest_checkpoint(const std::string& dir) {
  std::error_code ec;
  std::string best;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.rfind("checkpoint-", 0) == 0 && it->path().extension() == ".bin" && name > fs::path(best).filename().string())
      best = it->path().string();
  }
  return best;
}

}  // namespace syncpoint
