// The cost of a checkpoint against the model size: bytes on disk, time to
// write (through a temporary file, fsync, rename) and to read back with every
// check, side by side with writing the same bytes raw (write + fsync) in the
// same run. The trace part is held at 10,000 events.
//
//   build/bench_checkpoint [--repeat R] [--dir DIR]   (DIR: where to write; default a temp folder)
#include "bench/args.hpp"
#include <syncpoint/model.hpp>
#include "bench/stats.hpp"
#include "runtime/records/checkpoint_file.hpp"
#include <syncpoint/train.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace syncpoint;
using bench::median;
using clk = std::chrono::steady_clock;

namespace {

double ms_since(clk::time_point t0) {
  return std::chrono::duration<double, std::milli>(clk::now() - t0).count();
}

checkpoint make(uint64_t parameters, int workers) {
  checkpoint c;
  c.head = {checkpoint_format, "bench", parameters, "asp"};
  c.state.samples = 123456;
  c.state.ps.w.assign(parameters, 0.25f);
  c.state.ps.velocity.assign(parameters, -0.5f);
  c.state.coordinator.clock.assign(static_cast<size_t>(workers), 1000);
  for (int w = 0; w < workers; ++w) {  // as in an ASP run: each holds the model and a gradient in progress
    saved_worker s;
    s.id = w;
    s.rng_state = std::string(5000, '7');  // mt19937_64's text is ~5 kB
    s.model = c.state.ps.w;                // stored once with the PS's
    s.grad.assign(parameters, 0.001f * static_cast<float>(w + 1));
    c.state.workers.push_back(std::move(s));
  }
  for (int i = 0; i < 10000; ++i)
    c.state.trace.push_back({"compute", i % workers, i * 1000, i * 1000 + 900, uint64_t(i), uint64_t(i), 0.5, ""});
  return c;
}

double raw_write_ms(const std::string& file, size_t bytes) {
  std::vector<char> data(bytes, 'x');
  auto t0 = clk::now();
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  size_t done = 0;
  while (fd >= 0 && done < bytes) {
    auto n = ::write(fd, data.data() + done, bytes - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  return ms_since(t0);
}

// A whole virtual-clock job with and without checkpoints: what a checkpoint
// costs a run (gathering every actor's state, pooling, writing), per checkpoint.
void run_cost(const std::string& dir, int repeat) {
  std::printf("\nwhole runs (virtual clock, asp, 4 workers, 3:x4, 1 epoch of 12,000 examples), with and\n"
              "without a checkpoint every 1/10 of the run; median of %d; wall time\n\n", repeat);
  std::printf("| model | parameters | checkpoints | file | run ms | run with checkpoints ms | per checkpoint ms | "
              "with / without |\n|---|---|---|---|---|---|---|---|\n");
  for (std::string model : {"softmax", "mlp", "cnn"}) {
    job_config cfg;
    cfg.protocol = "asp";
    cfg.model = model;
    cfg.workers = 4;
    cfg.train_limit = 12000;
    cfg.test_limit = 500;
    cfg.epochs = 1;
    cfg.straggler = "3:x4";
    cfg.progress = false;
    std::vector<double> plain, with;
    size_t count = 0;
    uintmax_t bytes = 0;
    double run_time = train(cfg).summary.run_time_s;  // and a warm-up
    for (int k = 0; k < repeat; ++k) {
      auto t0 = clk::now();
      train(cfg);
      plain.push_back(ms_since(t0));
      auto c = cfg;
      c.checkpoint_every_s = run_time / 10;
      c.checkpoint_dir = dir + "/run";
      c.checkpoint_keep = 0;
      std::filesystem::remove_all(c.checkpoint_dir);
      t0 = clk::now();
      train(c);
      with.push_back(ms_since(t0));
      count = 0;
      for (auto& e : std::filesystem::directory_iterator(c.checkpoint_dir)) {
        ++count;
        bytes = e.file_size();
      }
    }
    auto m = make_model(model);
    std::printf("| %s | %zu | %zu | %.1f MB | %.0f | %.0f | %.1f | %.2f |\n", model.c_str(), m->size(), count,
                static_cast<double>(bytes) / 1e6, median(plain), median(with),
                (median(with) - median(plain)) / static_cast<double>(std::max<size_t>(1, count)),
                median(with) / median(plain));
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  std::string dir = (std::filesystem::temp_directory_path() / "syncpoint_bench_checkpoint").string();
  CLI::App app{"checkpoint write and read against raw writes of the same bytes", "bench_checkpoint"};
  app.add_option("--repeat", repeat, "runs of each (the median is shown)")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--dir", dir, "where the files go")->capture_default_str();
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  std::filesystem::create_directories(dir);
  std::printf("checkpoint write (temp file, fsync, rename) and read (CRC and every check), median of %d,\n"
              "against writing the same bytes raw (write + fsync); 4 workers, 10,000 trace events\n\n",
              repeat);
  std::printf("| model | parameters | file | write ms | read ms | raw write ms | write / raw | write MB/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  struct size_case { const char* name; uint64_t parameters; };
  for (auto sc : {size_case{"softmax", 7850}, size_case{"mlp", 203530}, size_case{"1M", 1000000},
                  size_case{"4M", 4000000}, size_case{"16M", 16000000}}) {
    auto c = make(sc.parameters, 4);
    std::vector<double> w, r, raw;
    std::string file;
    for (int k = 0; k < repeat; ++k) {
      auto copy = c;  // write_checkpoint takes the state over, as runners hand theirs
      auto t0 = clk::now();
      file = write_checkpoint(dir, std::move(copy));
      w.push_back(ms_since(t0));
      t0 = clk::now();
      auto back = read_checkpoint(file, c.head);
      r.push_back(ms_since(t0));
      if (back.state.ps.w.size() != sc.parameters)
        std::fprintf(stderr, "bench_checkpoint: read back the wrong size\n");
      raw.push_back(raw_write_ms(dir + "/raw.bin", std::filesystem::file_size(file)));
    }
    double bytes = static_cast<double>(std::filesystem::file_size(file));
    std::printf("| %s | %llu | %.1f MB | %.1f | %.1f | %.1f | %.2f | %.0f |\n", sc.name,
                static_cast<unsigned long long>(sc.parameters), bytes / 1e6, median(w), median(r), median(raw),
                median(w) / median(raw), bytes / 1e6 / (median(w) / 1e3));
    std::fflush(stdout);
  }
  run_cost(dir, repeat);
  std::filesystem::remove_all(dir);
  return 0;
}
