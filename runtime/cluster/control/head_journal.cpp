#include "runtime/cluster/control/head_journal.hpp"

#include "runtime/records/durable_file.hpp"
#include <syncpoint/job_config.hpp>

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace syncpoint::cluster {

namespace fs = std::filesystem;

namespace {

const std::string magic = "syncpoint-head-journal";

uint32_t crc_of(const std::string& bytes) {
  return static_cast<uint32_t>(
    crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

template <class T>
void put(std::string& out, T x) {
  out.append(reinterpret_cast<const char*>(&x), sizeof x);
}

// Reads what the layout says, in order; false once the bytes run out.
struct reader {
  const std::string& bytes;
  size_t at = 0;

  template <class T>
  bool get(T& x) {
    if (bytes.size() - at < sizeof x)
      return false;
    std::memcpy(&x, bytes.data() + at, sizeof x);
    at += sizeof x;
    return true;
  }
  bool get(std::string& s, uint64_t n) {
    if (bytes.size() - at < n)
      return false;
    s.assign(bytes, at, n);
    at += n;
    return true;
  }
};

}  // namespace

std::string journal_file(const std::string& dir) {
  return (fs::path(dir) / "head.journal").string();
}

void write_journal(caf::actor_system& sys, const std::string& dir, const head_journal& j) {
  auto file = journal_file(dir);
  std::error_code ec;
  if (fs::create_directories(dir, ec))  // a folder made here is the owner's alone; one given keeps its mode
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  std::vector<char> encoded;
  caf::binary_serializer sink{sys, encoded};
  if (auto err = sink(const_cast<head_journal&>(j)))
    throw config_error("cannot write the head's journal '" + file + "': " + sys.render(err));
  std::string payload(encoded.begin(), encoded.end());
  std::string header = magic;
  put(header, journal_format);
  auto& schema = schema_fingerprint();
  put(header, static_cast<uint64_t>(schema.size()));
  header += schema;
  put(header, static_cast<uint64_t>(payload.size()));
  put(header, crc_of(payload));
  auto written = write_durably(file, (fs::path(dir) / ".head.journal.tmp").string(), {&header, &payload});
  if (!written.ok())
    throw config_error("cannot write the head's journal '" + file + "': " + written.why +
                       " (the previous journal is intact)");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
}

std::optional<head_journal> read_journal(caf::actor_system& sys, const std::string& dir) {
  auto file = journal_file(dir);
  std::error_code ec;
  if (!fs::exists(file, ec))
    return std::nullopt;
  auto refused = [&](const std::string& why) {
    return config_error("the head's journal '" + file + "' " + why +
                        ": the head does not start on it, and leaves it as it is (move it away to start afresh)");
  };
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw refused("cannot be read");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.compare(0, magic.size(), magic) != 0)
    throw refused("is not a syncpoint head journal");
  reader r{bytes, magic.size()};
  uint32_t format = 0;
  uint64_t schema_size = 0;
  std::string schema;
  uint64_t length = 0;
  uint32_t crc = 0;
  if (!r.get(format))
    throw refused("is torn (it ends in its header)");
  if (format != journal_format)
    throw refused("is of journal format " + std::to_string(format) + "; this build reads format " +
                  std::to_string(journal_format));
  if (!r.get(schema_size) || !r.get(schema, schema_size) || !r.get(length) || !r.get(crc))
    throw refused("is torn (it ends in its header)");
  if (schema != schema_fingerprint())
    throw refused("was written by another build of syncpoint, whose messages differ (its schema " + schema +
                  ", this build's " + schema_fingerprint() + ")");
  if (bytes.size() - r.at != length)
    throw refused("is torn (" + std::to_string(bytes.size() - r.at) + " bytes of its " + std::to_string(length) +
                  "-byte payload)");
  auto payload = bytes.substr(r.at);
  if (crc_of(payload) != crc)
    throw refused("is corrupt (its CRC-32 does not match)");
  head_journal j;
  caf::binary_deserializer source{sys, payload.data(), payload.size()};
  if (auto err = source(j); err || source.remaining() != 0)
    throw refused("is corrupt (its payload does not decode)");
  return j;
}

}  // namespace syncpoint::cluster
