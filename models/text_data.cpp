// The text sets (--dataset text, <syncpoint/dataset.hpp>): any UTF-8 text as
// windows of context + 1 tokens. Characters: each a code point's place in the
// vocabulary, which is every code point the text holds, in order. Words
// (text:tokens=words): each word's place among the training part's most
// frequent words, 0 for any other. A folder is its regular files, by name,
// that hold no NUL byte (so fortune's .dat indexes are left out); the last
// tenth of the text is held out.
#include <syncpoint/dataset.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <unordered_map>

namespace syncpoint {

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw data_error("--dataset text: cannot read '" + p.string() + "'");
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

// The code points of `s`; a data_error naming `where` and the byte at which it is not UTF-8.
std::vector<uint32_t> code_points(const std::string& s, const std::string& where) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  auto bad = [&](size_t at) {
    throw data_error("--dataset text: '" + where + "' is not UTF-8 text (byte " + std::to_string(at) + ")");
  };
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size())
      bad(i);
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2)
        bad(i);
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      bad(i);
    out.push_back(cp);
    i += n;
  }
  return out;
}

// The text at `path`: a file, or a folder's text files by name.
std::string read_text(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file() && !e.is_symlink())
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::string all;
    for (auto& f : files) {
      auto text = slurp(f);
      if (text.find('\0') == std::string::npos)  // binary (an index): not text
        all += text;
    }
    return all;
  }
  if (!fs::exists(path, ec))
    throw data_error("--dataset text: '" + path + "' does not exist (give --data a UTF-8 text file or a folder of them)");
  return slurp(path);
}

// Windows of `width` tokens from ids[begin, end), one every `width - 1`
// (each window's last token is the next one's first input): a dataset.
dataset windows(const std::vector<int64_t>& ids, size_t begin, size_t end, int64_t width, int64_t vocabulary) {
  dataset d;
  d.set_shape({width});
  d.classes = vocabulary;
  auto w = static_cast<size_t>(width);
  for (size_t at = begin; at + w <= end; at += w - 1) {
    for (size_t k = 0; k < w; ++k)
      d.x.push_back(static_cast<float>(ids[at + k]));
    d.y.push_back(ids[at + w - 1]);
  }
  d.size = static_cast<int64_t>(d.y.size());
  return d;
}

// Words of code points: a run of letters and digits (any code point past
// ASCII counts as a letter; an apostrophe between two of them joins them),
// ASCII lowercased; any other visible code point is a token of its own;
// white space only separates.
std::vector<std::string> words_of(const std::vector<uint32_t>& cps) {
  auto letter = [](uint32_t c) { return c >= 0x80 || (c < 0x80 && std::isalnum(static_cast<int>(c))); };
  auto utf8 = [](uint32_t c, std::string& out) {
    if (c < 0x80) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  };
  std::vector<std::string> out;
  std::string word;
  auto end_word = [&] {
    if (!word.empty())
      out.push_back(std::move(word));
    word.clear();
  };
  for (size_t i = 0; i < cps.size(); ++i) {
    auto c = cps[i];
    if (letter(c) || (c == '\'' && !word.empty() && i + 1 < cps.size() && letter(cps[i + 1]))) {
      utf8(c, word);
      continue;
    }
    end_word();
    if (c > ' ' && c != 0x7F) {
      utf8(c, word);
      end_word();
    }
  }
  end_word();
  return out;
}

}  // namespace

train_test load_words(const std::string& path, int64_t context, int64_t vocabulary) {
  if (context < 1)
    throw data_error("--dataset text: a context of " + std::to_string(context) + " words (at least 1)");
  if (vocabulary < 2)
    throw data_error("--dataset text: a vocabulary of " + std::to_string(vocabulary) +
                     " words (at least 2: one word, and 0 for every other)");
  auto words = words_of(code_points(read_text(path), path));
  if (words.empty())
    throw data_error("--dataset text: '" + path + "' holds no text");
  auto split = words.size() - words.size() / 10;  // the last tenth is held out
  // The vocabulary: the training part's most frequent words (ties: the first in byte order), 1 .. V-1.
  std::unordered_map<std::string, int64_t> counts;
  for (size_t i = 0; i < split; ++i)
    ++counts[words[i]];
  std::vector<std::pair<int64_t, std::string>> ranked;
  ranked.reserve(counts.size());
  for (auto& [w, n] : counts)
    ranked.emplace_back(-n, w);
  auto kept = std::min<size_t>(ranked.size(), static_cast<size_t>(vocabulary - 1));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(kept), ranked.end());
  std::unordered_map<std::string, int64_t> id;
  for (size_t i = 0; i < kept; ++i)
    id.emplace(ranked[i].second, static_cast<int64_t>(i) + 1);
  std::vector<int64_t> ids;
  ids.reserve(words.size());
  for (auto& w : words) {
    auto at = id.find(w);
    ids.push_back(at == id.end() ? 0 : at->second);
  }
  auto width = context + 1;
  auto classes = static_cast<int64_t>(kept) + 1;
  train_test out{windows(ids, 0, split, width, classes), windows(ids, split, ids.size(), width, classes)};
  if (out.train.size < 1 || out.test.size < 1)
    throw data_error("--dataset text: '" + path + "' holds " + std::to_string(words.size()) + " words, too few for " +
                     "a window of " + std::to_string(width) + " in both its first nine tenths and its last (--context)");
  return out;
}

train_test load_text(const std::string& path, int64_t context) {
  if (context < 1)
    throw data_error("--dataset text: a context of " + std::to_string(context) + " characters (at least 1)");
  auto cps = code_points(read_text(path), path);
  if (cps.empty())
    throw data_error("--dataset text: '" + path + "' holds no text");
  std::map<uint32_t, int64_t> vocabulary;
  for (auto c : cps)
    vocabulary.emplace(c, 0);
  int64_t next = 0;
  for (auto& [c, id] : vocabulary)
    id = next++;
  std::vector<int64_t> ids;
  ids.reserve(cps.size());
  for (auto c : cps)
    ids.push_back(vocabulary[c]);
  auto width = context + 1;
  auto split = cps.size() - cps.size() / 10;  // the last tenth is held out
  train_test out{windows(ids, 0, split, width, next), windows(ids, split, ids.size(), width, next)};
  if (out.train.size < 1 || out.test.size < 1)
    throw data_error("--dataset text: '" + path + "' holds " + std::to_string(cps.size()) + " characters, too few for " +
                     "a window of " + std::to_string(width) + " in both its first nine tenths and its last (--context)");
  return out;
}

}  // namespace syncpoint
