#include "runtime/checkpoint_file.hpp"

#include "runtime/job_config.hpp"

#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <fcntl.h>
#include <unistd.h>

namespace syncpoint {

template <class Archive>
void serialize(Archive& ar, checkpoint_header& h) {
  ar(h.model, h.parameters, h.protocol);
}
template <class Archive>
void serialize(Archive& ar, worker_checkpoint& w) {
  ar(w.clock, w.data_position, w.rng_state, w.batch);
}
template <class Archive>
void serialize(Archive& ar, trace_event& e) {
  ar(e.kind, e.worker, e.t0, e.t1, e.iter, e.version, e.value, e.note);
}
template <class Archive>
void serialize(Archive& ar, checkpoint_state& s) {
  ar(s.time_ns, s.samples, s.version, s.weights, s.velocity, s.mean_staleness, s.workers, s.protocol_state,
     s.trace);
}

namespace {

namespace fs = std::filesystem;

const std::string magic = "syncpoint-checkpoint";

uint32_t crc_of(const std::string& bytes) {
  return static_cast<uint32_t>(
    crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

[[noreturn]] void refuse(const std::string& file, const std::string& what) {
  throw config_error("checkpoint '" + file + "': " + what);
}

}  // namespace

std::string write_checkpoint(const std::string& dir, const checkpoint& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint-%012llu.bin", static_cast<unsigned long long>(c.state.samples));
  auto file = (fs::path(dir) / name).string();
  auto tmp = (fs::path(dir) / ".checkpoint.tmp").string();
  std::ostringstream payload_stream(std::ios::binary);
  {
    cereal::PortableBinaryOutputArchive ar(payload_stream);
    ar(c.state);
  }
  auto payload = payload_stream.str();
  std::ostringstream whole(std::ios::binary);
  {
    cereal::PortableBinaryOutputArchive ar(whole);
    uint32_t format = c.head.format;
    uint64_t length = payload.size();
    uint32_t crc = crc_of(payload);
    ar(magic, format, c.head, length, crc);
  }
  whole.write(payload.data(), static_cast<std::streamsize>(payload.size()));
  auto bytes = whole.str();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw config_error("cannot write checkpoint '" + file + "' (" + tmp + "): " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      auto err = std::string(std::strerror(errno));
      ::close(fd);
      ::unlink(tmp.c_str());
      throw config_error("cannot write checkpoint '" + file + "': " + err + " (the previous ones are intact)");
    }
    done += static_cast<size_t>(n);
  }
  bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || std::rename(tmp.c_str(), file.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw config_error("cannot write checkpoint '" + file + "': " + std::strerror(errno) +
                       " (the previous ones are intact)");
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // make the rename durable
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return file;
}

checkpoint read_checkpoint(const std::string& file, const checkpoint_header& expect) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    refuse(file, "cannot be opened");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto bytes = buffer.str();
  std::istringstream stream(bytes, std::ios::binary);
  checkpoint c;
  uint64_t length = 0;
  uint32_t crc = 0;
  try {
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
    ar(c.head.format);
    if (c.head.format != checkpoint_format)
      refuse(file, "format version " + std::to_string(c.head.format) + ", but this build reads version " +
                     std::to_string(checkpoint_format));
    ar(c.head, length, crc);
  } catch (const cereal::Exception&) {
    refuse(file, "truncated (its header ends early)");
  }
  if (c.head.model != expect.model || c.head.parameters != expect.parameters)
    refuse(file, "it is of model '" + c.head.model + "' with " + std::to_string(c.head.parameters) +
                   " parameters, but the job's model is '" + expect.model + "' with " +
                   std::to_string(expect.parameters));
  if (c.head.protocol != expect.protocol)
    refuse(file, "it is of protocol '" + c.head.protocol + "', but the job's is '" + expect.protocol + "'");
  auto start = static_cast<size_t>(stream.tellg());
  if (start > bytes.size() || bytes.size() - start < length)
    refuse(file, "truncated (" + std::to_string(bytes.size() - std::min(start, bytes.size())) + " of " +
                   std::to_string(length) + " payload bytes)");
  auto payload = bytes.substr(start, static_cast<size_t>(length));
  if (crc_of(payload) != crc)
    refuse(file, "corrupt (its checksum does not match)");
  try {
    std::istringstream ps(payload, std::ios::binary);
    cereal::PortableBinaryInputArchive ar(ps);
    ar(c.state);
  } catch (const cereal::Exception& e) {
    refuse(file, std::string("corrupt (") + e.what() + ")");
  }
  if (c.state.weights.size() != expect.parameters)
    refuse(file, "corrupt (" + std::to_string(c.state.weights.size()) + " weights for " +
                   std::to_string(expect.parameters) + " parameters)");
  return c;
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
