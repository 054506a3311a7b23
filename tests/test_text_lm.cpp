// The language-model workload (issue 58): the character-level text set
// (--dataset text) on scripted files, its refusals, and tinylm learning a
// text down to a loss bound, reported where accuracy would be.
#include <syncpoint/data_registry.hpp>
#include <syncpoint/dataset.hpp>
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>

#include "tests/cli_run.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace syncpoint;
namespace fs = std::filesystem;

namespace {

struct text_folder : syncpoint::testing::temp_folder {
  text_folder() : temp_folder("syncpoint_text") { fs::create_directories(path); }
  std::string file(const std::string& name, const std::string& bytes) const {
    auto p = path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

std::string repeated(const std::string& s, int times) {
  std::string out;
  for (int i = 0; i < times; ++i)
    out += s;
  return out;
}

}  // namespace

TEST_CASE("text: windows of context + 1 characters, each one past the last's start, the last tenth held out") {
  text_folder dir;
  // 100 characters: "é" is one character of two bytes.
  auto path = dir.file("t.txt", repeated("abcdé", 20));
  auto d = load_text(path, 4);
  CHECK(d.train.classes == 5);  // a b c d é, sorted by code point
  CHECK(d.train.shape == std::vector<int64_t>{5});
  // 90 characters for training: windows start at 0, 4, 8, ... while 5 fit.
  CHECK(d.train.size == 22);
  CHECK(std::vector<float>(d.train.row(0), d.train.row(0) + 5) == std::vector<float>{0, 1, 2, 3, 4});
  CHECK(std::vector<float>(d.train.row(1), d.train.row(1) + 5) == std::vector<float>{4, 0, 1, 2, 3});
  CHECK(d.train.y[1] == 3);  // the label: the window's last character
  CHECK(d.test.size == 2);   // 10 held out: windows at 90 and 94
  CHECK(std::vector<float>(d.test.row(0), d.test.row(0) + 5) == std::vector<float>{0, 1, 2, 3, 4});
}

TEST_CASE("text:tokens=words: words by their rank in the training part, 0 past the vocabulary, the last tenth held out") {
  text_folder dir;
  // 40 words. The training part's 36: "the" 9 times, "cat's", "hat" (ASCII lowercased) and "." 8 each,
  // "dog", "é" and "!" once; the held-out 4: "x the cat's zebra".
  auto path = dir.file("w.txt", repeated("The cat's HAT. ", 8) + "dog\n\u00e9! the x the cat's zebra");
  auto d = load_words(path, 3, 5);  // the 4 most frequent: "the" 1, then by bytes ". " 2, "cat's" 3, "hat" 4
  CHECK(d.train.classes == 5);
  CHECK(d.train.shape == std::vector<int64_t>{4});
  CHECK(d.train.size == 11);  // windows of 4 words at 0, 3, ..., 30
  CHECK(std::vector<float>(d.train.row(0), d.train.row(0) + 4) == std::vector<float>{1, 3, 4, 2});
  CHECK(std::vector<float>(d.train.row(10), d.train.row(10) + 4) == std::vector<float>{4, 2, 0, 0});  // hat . dog é
  CHECK(d.train.y[10] == 0);
  REQUIRE(d.test.size == 1);
  CHECK(std::vector<float>(d.test.row(0), d.test.row(0) + 4) == std::vector<float>{0, 1, 3, 0});  // x the cat's zebra
  // The registered set: text:tokens=words,vocab=N; characters by default.
  data_request r;
  r.dir = path;
  r.context = 3;
  r.options = "tokens=words,vocab=5";
  CHECK(make_dataset("text:tokens=words,vocab=5", r).train.size == 11);
  r.options.clear();
  CHECK(make_dataset("text", r).train.classes > 5);  // characters
}

TEST_CASE("text: a folder is its text files by name, and what is missing, empty, not UTF-8 or too short is refused") {
  text_folder dir;
  dir.file("b", repeated("yz", 50));
  dir.file("a", repeated("xy", 50));
  dir.file("a.dat", std::string("\0\1\2\3", 4));  // binary (fortune's index): left out
  auto d = load_text(dir.path.string(), 3);
  CHECK(d.train.classes == 3);
  CHECK(d.train.row(0)[0] == 0);  // "a" first: x
  auto refused = [](const std::string& path, int64_t context, const std::string& words) {
    try {
      load_text(path, context);
      FAIL("not refused: " << path);
    } catch (const data_error& e) {
      CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
    }
  };
  refused((dir.path / "none").string(), 3, "does not exist");
  refused(dir.file("empty", ""), 3, "holds no text");
  refused(dir.file("latin1", "caf\xe9 au lait"), 3, "is not UTF-8 text (byte 3)");
  refused(dir.file("overlong", "a\xc0\xafz"), 3, "is not UTF-8 text (byte 1)");
  refused(dir.file("cut", "ab\xe2\x82"), 3, "is not UTF-8 text");
  refused(dir.file("short", "abcdefghij"), 8, "too few");
}

TEST_CASE("text: tinylm learns a text below 0.5 nats a character, and reports loss and perplexity, not accuracy") {
  text_folder dir;
  auto path = dir.file("fox.txt", repeated("the quick brown fox jumps over the lazy dog. ", 60));
  job_config cfg;
  cfg.protocol = "bsp";
  cfg.workers = 2;
  cfg.model = "tinylm:layers=1,width=32,heads=2";
  cfg.dataset = "text";
  cfg.data_dir = path;
  cfg.context = 16;
  cfg.batch = 16;
  cfg.optimizer = "adam";
  cfg.lr = 0.01;
  cfg.epochs = 12;
  cfg.eval_every = 4;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  auto r = train(cfg);
  CHECK(r.summary.final_accuracy < 0);  // none: the loss stands in for it
  REQUIRE(r.summary.final_metrics.size() == 2);
  CHECK(r.summary.final_metrics[0].name == "loss");
  CHECK(r.summary.final_metrics[1].name == "perplexity");
  auto loss = r.summary.final_metrics[0].value;
  MESSAGE("tinylm's held-out loss: " << loss << " nats a character (uniform over 28: " << std::log(28.0) << ")");
  CHECK(loss < 0.5);
  CHECK(r.summary.final_metrics[1].value == doctest::Approx(std::exp(loss)));
  // Its evaluations went down: the first is above the last.
  std::vector<double> losses;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.note == "loss")
      losses.push_back(e.value);
  REQUIRE(losses.size() >= 2);
  CHECK(losses.front() > losses.back());
}

TEST_CASE("text: tinylm's token embedding as a PS table (embed=table) learns the text, the same on one shard or three") {
  text_folder dir;
  auto path = dir.file("fox.txt", repeated("the quick brown fox jumps over the lazy dog. ", 60));
  job_config cfg;
  cfg.protocol = "bsp";
  cfg.workers = 2;
  cfg.model = "tinylm:layers=1,width=32,heads=2,embed=table";
  cfg.dataset = "text";
  cfg.data_dir = path;
  cfg.context = 16;
  cfg.batch = 16;
  cfg.optimizer = "adam";
  cfg.lr = 0.01;
  cfg.epochs = 12;
  cfg.eval_every = 4;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  auto one = train(cfg);
  REQUIRE(one.failures.empty());
  auto loss = one.summary.final_metrics.at(0).value;
  MESSAGE("tinylm embed=table's held-out loss: " << loss << " nats a character");
  CHECK(loss < 0.5);
  auto dense = cfg;
  dense.model = "tinylm:layers=1,width=32,heads=2";
  auto whole = train(dense);
  CHECK(one.final_model.values.size() + 28 * 32 == whole.final_model.values.size());  // 28 characters' rows
  cfg.ps_shards = 3;
  auto three = train(cfg);
  CHECK(three.final_model.values == one.final_model.values);
  CHECK(three.summary.final_metrics.at(0).value == loss);
}

TEST_CASE("text: bad text options are refused with exit 2, naming what is wrong") {
  using syncpoint::testing::check_refused;
  text_folder dir;
  std::string lm = " --model tinylm --dataset text --progress=false --epochs 0.01";
  check_refused("train" + lm + " --data " + (dir.path / "none.txt").string(), "does not exist");
  check_refused("train" + lm + " --data " + dir.file("empty.txt", ""), "holds no text");
  check_refused("train" + lm + " --data " + dir.file("l1.txt", "na\xefve"), "is not UTF-8 text");
  auto ok = dir.file("ok.txt", repeated("hello world ", 100));
  check_refused("train" + lm + " --data " + ok + " --context 0", "--context");
  check_refused("train --model tinylm:layers=two --dataset text --data " + ok + " --progress=false", "layers=two");
  check_refused("train --model tinylm:width=30,heads=4 --dataset text --data " + ok + " --progress=false",
                "not a multiple of heads");
  std::string lm_of = " --model tinylm --progress=false --epochs 0.01 --data " + ok + " --dataset ";
  check_refused("train" + lm_of + "text:tokens=words,vocab=1", "'vocab=1' is not a whole number of at least 2");
  check_refused("train" + lm_of + "text:vocab=100", "vocab= is for tokens=words");
  check_refused("train" + lm_of + "text:tokens=bytes", "'tokens=bytes' is not one of tokens=chars|words");
  check_refused("train --model tinylm:embed=sparse --dataset text --data " + ok + " --progress=false",
                "'embed=sparse' is not embed=dense or embed=table");
  check_refused("train --model tinylm:embed=table,opt=rmsprop --dataset text --data " + ok + " --progress=false",
                "'opt=rmsprop' is not opt=sgd, opt=adagrad or opt=adam");
  check_refused("train --model tinylm --dataset synthetic --progress=false", "tinylm: takes windows of characters");
}
