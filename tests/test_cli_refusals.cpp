// The `syncpoint` command refusing what it cannot do: every bad argument,
// value and config file exits with status 2 and one line naming the problem
// (docs/bad-input.md's command-line rows). The rest of the command as a user
// runs it is tests/test_cli.cpp.
#include "tests/cli_run.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

const auto& run = syncpoint::testing::run_cli;
const auto& fast = syncpoint::testing::fast_job;

}  // namespace

// Every case in this file starts the syncpoint command:
// scripts/soak-tests.sh runs this suite under load.
TEST_SUITE_BEGIN("process");

TEST_CASE("cli: bad arguments exit 2 with a message naming the problem") {
  auto r = run("train --protocol nope" + fast);
  CHECK(r.status == 2);
  CHECK(r.output.find("unknown protocol 'nope' (valid: asp, async-diloco, bsp, ") != std::string::npos);
  for (auto name : {"elastic-bsp", "r2sp", "ssp", "sync-switch", "wbsp", "wbsp-overlap"})  // and any added later
    CHECK(r.output.find(std::string(", ") + name) != std::string::npos);
  const auto& refused = syncpoint::testing::check_refused;
  refused("train --lr fast", "invalid value in '--lr=fast' (expected a number)");
  refused("train --bogus 1", "unknown option '--bogus' (see --help)");  // nothing near it
  refused("train --protocl bsp", "unknown option '--protocl' (did you mean --protocol?) (see --help)");
  refused("train --wokers 2", "unknown option '--wokers' (did you mean --workers?) (see --help)");
  refused("train --straggler 3:x4@8" + fast, "window '8' must be T1-T2");
  refused("train --clock wall", "--clock=wall");
  refused("train --workers", "needs a value");
  refused("frobnicate", "syncpoint: unknown command 'frobnicate'\nusage: syncpoint <command> [options]");
  refused("train --data /nowhere --epochs 1", "/nowhere/train-images-idx3-ubyte.gz: no such file");
  refused("compare --protocols bsp,nope" + fast, "unknown protocol 'nope'");
}

TEST_CASE("cli: short names follow the long ones' rules, integers are decimal, and CAF's settings reach only an actor system") {
  const auto& refused = syncpoint::testing::check_refused;
  // A short name's value is checked as its long name's, and never taken from the next option.
  refused("train -w x" + fast, "syncpoint train: invalid value in '--workers=x' (expected an integer)");
  refused("train" + fast + " -p", "syncpoint train: option '-p' needs a value");
  refused("train -p --workers 2" + fast, "syncpoint train: option '-p' needs a value, not the option '--workers' after it");
  refused("simulate -k x --progress=false", "syncpoint simulate: invalid value in '--iterations=x' (expected an integer)");
  // Whole numbers in decimal only, unsigned ones never negative.
  refused("train --seed -3" + fast, "syncpoint train: invalid value in '--seed=-3' (expected an integer)");
  refused("train --workers 0x10" + fast, "syncpoint train: invalid value in '--workers=0x10' (expected an integer)");
  refused("train --workers 99999999999" + fast,  // past an int: CLI11 would say "Could not convert"
          "syncpoint train: invalid value in '--workers=99999999999' (expected an integer)");
  auto r = run("train --workers 010 --epochs 0.05" + fast);  // ten workers, not octal's eight
  CHECK_MESSAGE(r.output.find("protocol bsp: 10 workers") != std::string::npos, r.output);
  // CAF's own settings are for the commands that start an actor system from them (head, node,
  // status, submit); a one-process run builds its own, so they would be ignored there.
  refused("train --scheduler.max-threads=2" + fast, "syncpoint train: unknown option '--scheduler.max-threads' (see --help)");
  refused("head --port 0 --middleman.no-such-setting=1",
          "syncpoint head: unknown option '--middleman.no-such-setting=1' (see --help)");
}

TEST_CASE("cli: another protocol's option, a repeated protocol, and cluster and zipline values out of range exit 2") {
  // `timeout`: a command that wrongly starts serving is ended, and the test fails instead of hanging.
  auto refused = [](const std::string& args, const std::string& words) {
    auto r = syncpoint::testing::run_shell("timeout 120 " + std::string(SYNCPOINT_CLI) + " " + args);
    std::string what = args + "\n" + r.output;
    CHECK_MESSAGE(r.status == 2, what);
    CHECK_MESSAGE(r.output.find(words) != std::string::npos, what);
  };
  refused("train -p bsp --lookahead 3" + fast, "syncpoint train: --lookahead is an option of elastic-bsp, not of bsp");
  refused("compare --protocols bsp,ssp --dssp-range 2" + fast, "--dssp-range is an option of dssp, not of bsp, ssp");
  refused("simulate -p asp --staleness 2 --progress=false", "--staleness is an option of dssp, ssp, not of asp");
  refused("compare --protocols bsp,asp,bsp" + fast,
          "syncpoint compare: --protocols names 'bsp' twice (each run writes its own folder)");
  refused("compare --protocols ," + fast, "syncpoint compare: --protocols names no protocol");
  refused("head", "syncpoint head: --port P is required (0..65535; 0 picks a free port)");
  refused("head --port 70000", "syncpoint head: --port P is required");
  refused("head --port 0 --slots 5000", "syncpoint head: --slots must be in 0..4096");
  refused("node --join 127.0.0.1:1 --slots 0", "syncpoint node: --slots must be in 1..4096");
  refused("head --port 0 --log-level loud",
          "syncpoint head: --log-level must be debug, info, warn, error or off, got 'loud'");
  refused("node --join 127.0.0.1:1 --log-level INFO",
          "syncpoint node: --log-level must be debug, info, warn, error or off, got 'INFO'");
  refused("node --join 127.0.0.1:1 --name \"$(printf 'a\\tb')\"", "syncpoint node: --name must be 1 to 128 printable characters");
  refused("zipline --random 5,5 --repeat 0", "syncpoint zipline: --repeat must be >= 1");
  refused("zipline", "syncpoint zipline: give exactly one of --input FILE and --random N,R");
  refused("zipline --random 5,5 --input /dev/null", "syncpoint zipline: give exactly one of --input FILE and --random N,R");
  // A port another socket listens on, and one nobody listens on.
  syncpoint::testing::loopback_socket taken(true), closed(false);
  REQUIRE((taken.ok() && closed.ok()));
  auto port = std::to_string(taken.port());
  refused("head --port " + port, "syncpoint head: cannot listen on 127.0.0.1:" + port);
  auto head = closed.address();
  refused("submit --head " + head + " -p bsp -w 2" + fast,
          "syncpoint submit: cannot connect to " + head + " (no head listening there?)");
  refused("status --head " + head, "syncpoint status: cannot connect to " + head + " (no head listening there?)");
  // TLS files that are not there: refused before anything listens or connects.
  refused("head --port 0 --tls --cert /nowhere.pem --key /nowhere.key --ca /nowhere.ca",
          "syncpoint head: --cert '/nowhere.pem' cannot be read");
  refused("node --join " + head + " --tls --cert /nowhere.pem --key /nowhere.key --ca /nowhere.ca",
          "syncpoint node: --cert '/nowhere.pem' cannot be read");
}

TEST_CASE("cli: bad option values and config files exit 2 with a message naming the problem") {
  auto refused = [](const std::string& args, const std::string& words) {
    auto r = run(args);
    std::string what = args + "\n" + r.output;
    CHECK_MESSAGE(r.status == 2, what);
    CHECK_MESSAGE(r.output.find(words) != std::string::npos, what);
    CHECK_MESSAGE(r.output.find("\nbsp") == std::string::npos, r.output);  // no progress line before it
  };
  refused("train --straggler 3x4" + fast, "syncpoint train: --straggler: straggler item '3x4': expected W:xF");
  refused("train --straggler '2:x1e4;2:x1e3'" + fast, "worker 2's factors multiply to 1e+07 at t=0 s");
  refused("train --model vgg --dataset synthetic", "unknown model 'vgg' (valid: cnn, ctr, mlp, resnet, resnet18, script, softmax, timing-only, tinylm)");
  refused("train --momentum 1.5" + fast, "--momentum must be in [0, 1)");
  refused("train --max-time 1e300" + fast, "--max-time must be in [0, 1e9] seconds");
  refused("train -p sync-switch --schedule bsp:2,asp" + fast, "sync-switch: share in 'bsp:2' must be in (0, 1]");
  refused("train -p sync-switch --switch-policy /nowhere.json" + fast, "cannot open switch policy file '/nowhere.json'");
  refused("train --fail-worker 2" + fast, "invalid value in '--fail-worker=2' (expected W@K, e.g. 2@10)");
  refused("train --fail-worker x@3" + fast, "invalid value in '--fail-worker=x@3' (expected W@K, e.g. 2@10)");
  refused("train --momentum-rule odd" + fast, "--momentum-rule must be adjusted or plain, not 'odd'");
  refused("train --optimizer lamb" + fast, "--optimizer must be sgd, nesterov, adam or adamw, not 'lamb'");
  refused("train --lr-schedule step" + fast, "--lr-schedule step needs --lr-milestones (epochs, e.g. 30,60)");
  refused("train --lr-schedule step --lr-milestones 2,x" + fast,
          "--lr-milestones: 'x' is not a positive number of epochs (expected a list like 30,60)");
  refused("train --lr-schedule cosine --epochs 0 --max-time 5 --dataset synthetic --progress=false",
          "--lr-schedule cosine needs the run's length: give --epochs (or --lr-epochs)");
  refused("train --warmup soon" + fast, "--warmup 'soon' is not a share of the run below 1");
  refused("train --clip-norm -1" + fast, "--clip-norm must be >= 0 (0: no clipping)");
  refused("train --sparse-sync sometimes" + fast, "--sparse-sync must be same or async, not 'sometimes'");
  refused("train --ps-memory 2XB" + fast, "invalid value in '--ps-memory=2XB' (expected a size such as 2GB, 512MiB or 1e9 bytes)");
  refused("train" + fast + " --model ctr:width=0 --dataset clicks:keys=100", "ctr: 'width=0' is not one of fields=N");
  refused("train" + fast + " --model ctr --dataset clicks:keys=100 --save-model /tmp/sp-no.model",
          "--save-model writes the dense weights, and model 'ctr' keeps sparse tables on the PS");
  refused("train" + fast + " --dataset clicks:colour=red", "clicks: no option 'colour' (keys, fields, numeric, rank, zipf)");
  refused("train --dataset mnist --progress=false", "unknown dataset 'mnist' (valid: blank, cifar10, clicks, fashion-mnist, idx, synthetic");
  refused("submit --placement diagonal --head 127.0.0.1:1", "--placement must be spread or pack, not 'diagonal'");
  refused("tune-switch --tolerance 2" + fast, "--tolerance must be in [0, 1) and --budget in 1..20");
  refused("tune-switch --budget 0" + fast, "--tolerance must be in [0, 1) and --budget in 1..20");
  refused("tune-switch --policy-out /nowhere/policy.json" + fast,  // before any run, not after all of them
          "syncpoint tune-switch: cannot write the policy file '/nowhere/policy.json'");
  refused("node --join localhost", "syncpoint node: --join expects HOST:PORT, got 'localhost'");
  refused("node --join 127.0.0.1:http", "syncpoint node: --join expects HOST:PORT, got '127.0.0.1:http'");
  refused("status --head :7000", "syncpoint status: --head expects HOST:PORT, got ':7000'");
  refused("submit --head 127.0.0.1:99999" + fast, "syncpoint submit: --head expects HOST:PORT, got '127.0.0.1:99999'");
  refused("head --port 0 --token-file /nowhere.token", "syncpoint head: cannot read the token file '/nowhere.token'");
  refused("status --head 127.0.0.1:1 --token-file /dev/null", "syncpoint status: cannot read the token file '/dev/null'");
  // Config files: missing, malformed, an unknown key, a value of the wrong type.
  auto dir = std::filesystem::temp_directory_path() / ("syncpoint-cli-ini-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return " --config-file=" + (dir / name).string();
  };
  refused("train --config-file=/nowhere.ini" + fast, "cannot open the config file '/nowhere.ini'");
  refused("train" + file("cut.ini", "[global]\nworkers=\n") + fast,
          "invalid value for 'workers' in the config file: \"\" (expected an integer)");
  refused("train" + file("unknown.ini", "[global]\nbogus-key=3\n") + fast,
          "unknown option 'bogus-key' in the config file (see --help)");
  refused("train" + file("type.ini", "global {\n  workers = \"four\"\n}\n") + fast,
          "invalid value for 'workers' in the config file: \"four\" (expected an integer)");
  refused("train" + file("section-type.ini", "[global]\nlr=\"fast\"\n") + fast,  // CAF drops it silently
          "invalid value for 'lr' in the config file: \"fast\" (expected a number)");
  refused("train" + file("group.ini", "[middleman]\nno-such-setting=1\n") + fast,
          "unknown option 'middleman.no-such-setting' in the config file");
  // CAF's default file, read from the working directory without --config-file, is checked
  // as strictly, and named: the user may not know it is read.
  std::filesystem::create_directories(dir / "cwd");
  std::ofstream(dir / "cwd" / "caf-application.ini") << "[global]\nlr=\"fast\"\n";
  auto in_cwd = syncpoint::testing::run_shell("cd " + (dir / "cwd").string() + " && " + SYNCPOINT_CLI + " train" + fast);
  CHECK_MESSAGE(in_cwd.status == 2, in_cwd.output);
  CHECK_MESSAGE(in_cwd.output.find("invalid value for 'lr' in the config file 'caf-application.ini' (read from the "
                                   "working directory without --config-file): \"fast\" (expected a number)") != std::string::npos,
                in_cwd.output);
  // Both forms of a good file are read, and the command line has the last word.
  auto r = run("train --epochs 0.1" + file("ini.ini", "[global]\nworkers=3\n") + fast);
  CHECK(r.output.find("protocol bsp: 3 workers") != std::string::npos);
  r = run("train --epochs 0.1" + file("braces.ini", "global {\n  workers = 3\n}\n") + fast);
  CHECK_MESSAGE(r.output.find("protocol bsp: 3 workers") != std::string::npos, r.output);
  r = run("train --epochs 0.1 -w 2" + file("ini.ini", "[global]\nworkers=3\n") + fast);
  CHECK(r.output.find("protocol bsp: 2 workers") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_SUITE_END();
