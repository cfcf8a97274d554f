// Nothing lost: no path the suite writes may be a file it reads, no two runs share a file name, a closed
// or full standard output never costs the report, signals leave no debris, and input sizes are bounded.
// Each test here failed before the fix it guards (README, "Failures the suite handles").
#include <gtest/gtest.h>
#include <fcntl.h>
#include <pty.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/network.hpp"
#include "common/text.hpp"
#include "suite/atomic_file.hpp"
#include "suite/dataset.hpp"
#include "suite/runner.hpp"
#include "suite/signals.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int code;
  std::string err;
};

Result run_in_process(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int code = suite_main(args, all_backends());
  ::testing::internal::GetCapturedStdout();
  return {code, ::testing::internal::GetCapturedStderr()};
}

bool is_report(const fs::path& p) {
  try {
    return read_json(p).contains("runs");
  } catch (const json::exception&) {
    return false;
  }
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A private copy of the embedded inputs, so that a failure of these tests can only hurt the copy.
struct Inputs {
  TempDir dir;
  fs::path data = dir / "cifar10", weights = dir / "weights";
  Inputs() {
    fs::create_directories(data);
    fs::copy_file(data_dir() / "cifar10" / "data_batch_1.bin", data / "data_batch_1.bin");
    fs::copy(data_dir() / "convnetjs-cifar10", weights);
  }
  std::vector<std::string> args(std::vector<std::string> more) const {
    std::vector<std::string> a{"--backend", kBaseline, "--images", "3", "--repeat", "1", "--warmup", "0",
                               "--data",    data.string(), "--weights", weights.string(), "--quiet"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
};

// ---- 1, 2: an output that is an input, or two outputs that are one file

TEST(NothingLost, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  Inputs in;
  const std::string data_before = slurp(in.data / "data_batch_1.bin");
  const std::string fc_before = slurp(in.weights / "layer10_fc.txt");
  fs::create_directory_symlink(in.weights, in.dir / "linked");
  fs::create_hard_link(in.data / "data_batch_1.bin", in.dir / "hard.bin");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--output", (in.data / "data_batch_1.bin").string()}, "--output '"},
      {{"--output", (in.dir / "linked" / "layer4_conv.txt").string()}, "layer4_conv.txt"},
      {{"--save-probs", (in.weights / "layer10_fc.txt").string()}, "--save-probs '"},
      {{"--output", (in.dir / "hard.bin").string()}, "data_batch_1.bin"},
  };
  for (const auto& [extra, fragment] : cases) {
    const Result r = run_in_process(in.args(extra));
    EXPECT_EQ(r.code, 2) << extra[1];
    EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(in.data / "data_batch_1.bin"), data_before);
  EXPECT_EQ(slurp(in.weights / "layer10_fc.txt"), fc_before);
  EXPECT_EQ(files_in(in.weights).size(), 5u) << "nothing added beside the weights";
}

// The folders given as --data and --weights hold inputs the run does not read (CIFAR-10's test batch beside
// the training batches, the weights folder's reference files): replacing one is refused as well, a new name
// there is not.
TEST(NothingLost, AnExistingFileInAnInputFolderIsRefusedAndKept) {
  Inputs in;
  write_bytes(in.data / "test_batch.bin", "the test set");
  write_bytes(in.weights / "README", "about the weights");
  const std::vector<std::pair<std::vector<std::string>, fs::path>> cases = {
      {{"--output", (in.data / "test_batch.bin").string()}, in.data / "test_batch.bin"},
      {{"--save-probs", (in.weights / "README").string()}, in.weights / "README"},
  };
  for (const auto& [extra, file] : cases) {
    const std::string before = slurp(file);
    const Result r = run_in_process(in.args(extra));
    EXPECT_EQ(r.code, 2) << extra[1];
    EXPECT_NE(r.err.find("is a file in the input folder"), std::string::npos) << r.err;
    EXPECT_TRUE(slurp(file) == before) << file << " was changed";
  }
  const Result fresh = run_in_process(in.args({"--output", (in.data / "new.json").string()}));
  EXPECT_EQ(fresh.code, 0) << fresh.err;
  EXPECT_TRUE(is_report(in.data / "new.json"));
}

TEST(NothingLost, ALinkAsTheOutputIsRefusedAndWhatItNamesKept) {
  // --output /dev/stderr (a link to /proc/self/fd/2) replaced that link with the report: name the file itself.
  Inputs in;
  const fs::path target = in.dir / "kept.txt";
  write_bytes(target, "kept");
  fs::create_symlink(target, in.dir / "link.json");
  fs::create_symlink(in.dir / "nowhere", in.dir / "dangling.json");
  for (const char* name : {"link.json", "dangling.json"}) {
    const Result r = run_in_process(in.args({"--output", (in.dir / name).string()}));
    EXPECT_EQ(r.code, 1) << name;
    EXPECT_NE(r.err.find("is a symbolic link: name the file itself"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_symlink(in.dir / name)) << name;
  }
  EXPECT_EQ(slurp(target), "kept");
  EXPECT_FALSE(fs::exists(in.dir / "nowhere"));
}

TEST(NothingLost, StandardOutputCarriesOneThingAtATime) {
  // --output - --format json printed the report twice; --save-probs /dev/stdout put the .npy after the JSON.
  Inputs in;
  const CliResult once = run_suite(in.args({"--output", "-", "--format", "json"}));
  EXPECT_EQ(once.exit_code, 0) << once.err;
  EXPECT_TRUE(json::accept(once.out)) << "one JSON document: " << once.out.substr(0, 200);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--output", "-", "--save-probs", "/dev/stdout"},
        {"--output", (in.dir / "r.json").string(), "--save-probs", "-", "--format", "csv"},
        {"--output", "-", "--format", "csv"}}) {
    const Result r = run_in_process(in.args(extra));
    EXPECT_EQ(r.code, 2) << extra[1] << " " << extra[3];
    EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(in.dir / "r.json")) << "refused before any work";
}

TEST(NothingLost, AFolderThatCannotBeMadeIsFoundBeforeTheRun) {
  // results/local a dangling link: create_directories failed with EEXIST after the whole run; a file there was
  // said not to exist.
  Inputs in;
  fs::create_directories(in.dir / "run" / "results");
  fs::create_symlink(in.dir / "nowhere", in.dir / "run" / "results" / "local");
  Launch how;
  how.cwd = in.dir / "run";
  CliResult r = run_suite(in.args({}), how);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("is a dangling symbolic link"), std::string::npos) << r.err;
  fs::remove(in.dir / "run" / "results" / "local");
  write_bytes(in.dir / "run" / "results" / "local", "a file");
  r = run_suite(in.args({}), how);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("'results/local' is not a directory"), std::string::npos) << r.err;
}

TEST(NothingLost, SaveProbsThatIsTheReportIsRefused) {
  Inputs in;
  fs::create_directory(in.dir / "sub");
  const fs::path report = in.dir / "r.json";
  for (const std::string& probs : {report.string(), (in.dir / "sub" / ".." / "r.json").string()}) {
    const Result r = run_in_process(in.args({"--output", report.string(), "--save-probs", probs}));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("are the same file"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(report)) << "refused before any work";
  }
}

// /dev/null (a character device, written in place) may take both the report and the probabilities.
TEST(NothingLost, DevNullTakesTheReportAndTheProbabilitiesAlike) {
  Inputs in;
  const Result r = run_in_process(in.args({"--output", "/dev/null", "--save-probs", "/dev/null"}));
  EXPECT_EQ(r.code, 0) << r.err;
}

// The default report's folder is made after the run: an ancestor that is a file is named before it
// (Failures.AnUncreatableDefaultReportFolderIsFoundBeforeTheRun: one that takes no new entry).
TEST(NothingLost, TheDefaultReportsFolderIsCheckedUpToItsNearestAncestor) {
  Inputs in;
  fs::create_directories(in.dir / "run");
  write_bytes(in.dir / "run" / "results", "a file");
  Launch how;
  how.cwd = in.dir / "run";
  const CliResult r = run_suite(in.args({}), how);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot create directory 'results/local' ('results' is not a directory)"), std::string::npos)
      << r.err;
}

// ---- 3, 4: names that cannot collide

TEST(NothingLost, ParallelRunsWithTheDefaultNameEachKeepTheirReport) {
  Inputs in;
  std::vector<std::thread> runs;
  std::vector<int> codes(4, -1);
  for (int i = 0; i < 4; ++i)
    runs.emplace_back([&, i] { codes[i] = run_suite(in.args({}), Launch{in.dir.path}).exit_code; });
  for (auto& t : runs) t.join();
  for (int c : codes) EXPECT_EQ(c, 0);
  const auto names = files_in(in.dir / "results" / "local");
  EXPECT_EQ(names.size(), 4u);
  for (const auto& n : names) EXPECT_TRUE(is_report(in.dir / "results" / "local" / n)) << n;
}

TEST(NothingLost, ASuiteChosenNameNeverReplacesAFile) {
  TempDir dir;
  write_bytes(dir / "r.json", "precious");
  const fs::path got = write_file_atomically(dir / "r.json", "new", Publish::no_clobber);
  EXPECT_EQ(got, dir / "r-2.json");
  EXPECT_EQ(slurp(dir / "r.json"), "precious");
  EXPECT_EQ(slurp(got), "new");
}

// Reports are for everyone to read (mkstemp makes 0600), whatever the umask; a directory made under the
// output's name after the run began stays a directory, with a line that says so.
TEST(NothingLost, AWrittenFileIsReadableByAllAndADirectoryIsNeverReplaced) {
  TempDir dir;
  const mode_t old_umask = ::umask(077);
  write_file_atomically(dir / "r.json", "{}\n");
  write_file_atomically(dir / "n.json", "{}\n", Publish::no_clobber);
  ::umask(old_umask);
  for (const char* name : {"r.json", "n.json"})
    EXPECT_EQ(fs::status(dir / name).permissions(), fs::perms(0644)) << name;
  fs::create_directory(dir / "d.json");
  write_bytes(dir / "d.json" / "inside", "kept");
  try {
    write_file_atomically(dir / "d.json", "{}\n");
    ADD_FAILURE() << "a directory was written over";
  } catch (const SuiteError& e) {
    EXPECT_NE(std::string(e.what()).find("d.json: is a directory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(dir / "d.json" / "inside"), "kept");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 3) << "a temporary file left";
}

TEST(NothingLost, TheTemporaryNameIsNotDerivedFromThePid) {
  // Another container's run (PID 1 there too) may be writing <out>.tmp.<pid> in the same directory.
  TempDir dir;
  const fs::path theirs = dir / ("r.json.tmp." + std::to_string(::getpid()));
  write_bytes(theirs, "another process' report in progress");
  write_file_atomically(dir / "r.json", "{}\n");
  EXPECT_EQ(slurp(theirs), "another process' report in progress");
  EXPECT_EQ(slurp(dir / "r.json"), "{}\n");
}

TEST(NothingLost, ParallelRunsOnOneOutputPublishAWholeReport) {
  Inputs in;
  const fs::path report = in.dir / "shared.json";
  std::vector<std::thread> runs;
  for (int i = 0; i < 4; ++i)
    runs.emplace_back([&] { EXPECT_EQ(run_suite(in.args({"--output", report.string()})).exit_code, 0); });
  for (auto& t : runs) t.join();
  EXPECT_TRUE(is_report(report));
  for (const auto& n : files_in(in.dir.path)) EXPECT_EQ(n.find(".tmp"), std::string::npos) << "left behind: " << n;
}

// ---- 6, 12: standard output closed or full

TEST(NothingLost, AClosedStdoutStillWritesTheReport) {
  Inputs in;
  const fs::path report = in.dir / "r.json";
  Launch how;
  how.stdout_pipe_closed = true;
  const CliResult r = run_suite(in.args({"--output", report.string(), "--format", "csv"}), how);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_report(report));
  EXPECT_NE(r.err.find("standard output was closed"), std::string::npos) << r.err;
}

// `suite --help | head -1`: the text was all it had to do, and a reader that has gone is no error.
TEST(NothingLost, HelpVersionAndListIntoAClosedPipeEndQuietly) {
  Launch how;
  how.stdout_pipe_closed = true;
  for (const std::string flag : {"--help", "--version", "--list"}) {
    const CliResult r = run_suite({flag}, how);
    EXPECT_EQ(r.exit_code, 0) << flag << ": " << r.err;
    EXPECT_EQ(r.err, "") << flag;
  }
}

TEST(NothingLost, AStdoutClosedFromTheStartIsNoFailure) {
  // `suite ... >&-` with the report going to a file exited 1 ("Bad file descriptor") after a passing run.
  Inputs in;
  Launch how;
  how.close_stdout = true;
  for (const char* format : {"table", "csv"}) {
    std::vector<std::string> a = in.args({"--output", (in.dir / "r.json").string(), "--format", format});
    a.erase(std::find(a.begin(), a.end(), "--quiet"));
    const CliResult r = run_suite(a, how);
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.err;
    EXPECT_NE(r.err.find("suite: note: standard output was closed from the start; the report is in " +
                         (in.dir / "r.json").string() + "\n"),
              std::string::npos) << r.err;
    EXPECT_TRUE(is_report(in.dir / "r.json")) << format;
  }
  const CliResult r = run_suite(in.args({"--output", "-"}), how);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "suite: error: -: standard output is closed (started with >&-)\n");
}

TEST(NothingLost, AFullStdoutIsAnErrorForEveryFormat) {
  Inputs in;
  for (const char* format : {"table", "json", "csv", "gbench"}) {
    Launch how;
    how.stdout_path = "/dev/full";
    std::vector<std::string> a = in.args({"--output", (in.dir / "r.json").string(), "--format", format});
    a.erase(std::find(a.begin(), a.end(), "--quiet"));  // the table is silenced by --quiet
    const CliResult r = run_suite(a, how);
    EXPECT_EQ(r.exit_code, 1) << format;
    EXPECT_NE(r.err.find("cannot write to standard output: No space left on device"), std::string::npos) << r.err;
    EXPECT_TRUE(is_report(in.dir / "r.json"));
  }
}

TEST(NothingLost, QuietStillPrintsTheRequestedFormat) {
  Inputs in;
  const CliResult r = run_suite(in.args({"--output", (in.dir / "r.json").string(), "--format", "gbench"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["benchmarks"].size(), 1u);
  EXPECT_EQ(r.err, "") << "--quiet: no 'suite: report:' line";
  // The table is what --quiet leaves out: neither a run's table nor the summary.
  const CliResult table = run_suite(in.args({"--output", (in.dir / "t.json").string(), "--format", "table"}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, "");
  EXPECT_EQ(table.err, "");
}

// ---- 7: bounded inputs

TEST(NothingLost, AHugeWeightFileIsRefusedUnread) {
  Inputs in;
  fs::resize_file(in.weights / "layer4_conv.txt", std::uintmax_t(2) << 30);  // sparse
  const Result r = run_in_process(in.args({"--output", (in.dir / "r.json").string()}));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("layer4_conv.txt: 2147483648 bytes, more than the 16384 KiB limit"), std::string::npos) << r.err;
}

TEST(NothingLost, OnlyTheImagesARunNeedsAreRead) {
  TempDir dir;
  // 4 x a 1 GiB batch of zero-valued records (sparse): a 3-image run reads 3 records, not 4 GiB.
  const fs::path big = dir / "big.bin";
  write_bytes(big, "");
  fs::resize_file(big, (kMaxBatchFileBytes / kRecordBytes) * kRecordBytes);
  const Dataset d = load_cifar10({big, big, big, big}, 3);
  EXPECT_EQ(d.size(), 3u);
  EXPECT_EQ(d.sources.size(), 1u);
  fs::create_symlink(data_dir() / "cifar10" / "data_batch_1.bin", dir / "same.bin");
  const Dataset once = load_cifar10({data_dir() / "cifar10", dir / "same.bin"});
  EXPECT_EQ(once.size(), 4000u) << "a file named twice (here through a symlink) is read once";
}

TEST(NothingLost, WeightsOutsideTheFloatRangeAreBadInput) {
  Inputs in;
  std::string text = slurp(in.weights / "layer1_conv.txt");
  text.replace(text.find('\n') + 1, 0, "1e39 ");  // finite as a double, Inf as float
  write_bytes(in.weights / "layer1_conv.txt", text);
  const Result r = run_in_process(in.args({"--output", (in.dir / "r.json").string()}));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("value 5 '1e39' is outside the float32 range"), std::string::npos) << r.err;
}

// ---- 8, 10: outputs that cannot work are refused before the run

TEST(NothingLost, AFifoOutputIsRefusedInsteadOfBlocking) {
  Inputs in;
  ASSERT_EQ(::mkfifo((in.dir / "fifo").c_str(), 0644), 0);
  const Result r = run_in_process(in.args({"--output", (in.dir / "fifo").string()}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("fifo: is a FIFO, not a regular file"), std::string::npos) << r.err;
}

TEST(NothingLost, LongNamesWorkUpToTheLimitAndAreRefusedPastItUpFront) {
  Inputs in;
  const fs::path ok = in.dir / (std::string(250, 'r') + ".json");
  Result r = run_in_process(in.args({"--output", ok.string()}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(is_report(ok));
  const fs::path too_long = in.dir / (std::string(256, 'r') + ".json");
  r = run_in_process(in.args({"--output", too_long.string()}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("file name too long (261 bytes, at most 255)"), std::string::npos) << r.err;
}

TEST(NothingLost, AnImmutableOutputIsRefusedUpFront) {
  Inputs in;
  const fs::path target = in.dir / "r.json";
  write_bytes(target, "old");
  if (std::system(("chattr +i " + target.string() + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "chattr +i is not supported here (file system or capabilities)";
  const Result r = run_in_process(in.args({"--output", target.string()}));
  std::system(("chattr -i " + target.string()).c_str());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot be replaced (Operation not permitted)"), std::string::npos) << r.err;
}

// ---- 9, 14, 16: file names and folders as they come

TEST(NothingLost, ANonUtf8DataPathIsRecordedEscaped) {
  Inputs in;
  const fs::path odd = in.dir / "bad\xff\x01name";
  fs::create_directory(odd);
  fs::copy_file(in.data / "data_batch_1.bin", odd / "data_batch_1.bin");
  std::vector<std::string> a = in.args({"--output", (in.dir / "r.json").string()});
  *(std::find(a.begin(), a.end(), in.data.string())) = odd.string();
  const Result r = run_in_process(a);
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = read_json(in.dir / "r.json");
  EXPECT_NE(j["meta"]["data"][0].get<std::string>().find("bad\\xFF\\x01name"), std::string::npos);
}

TEST(NothingLost, DataFoldersThatCannotBeReadAreBadInput) {
  Inputs in;
  fs::create_directory(in.dir / "loops");
  fs::create_symlink("a", in.dir / "loops" / "b");
  fs::create_symlink("b", in.dir / "loops" / "a");
  Result r = run_in_process(in.args({"--data", (in.dir / "loops" / "a").string(), "--output", (in.dir / "r.json").string()}));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("Too many levels of symbolic links"), std::string::npos) << r.err;
  r = run_in_process(in.args({"--data", (in.dir / "loops").string(), "--output", (in.dir / "r.json").string()}));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no CIFAR-10 .bin files"), std::string::npos) << r.err;

  if (const std::string why = why_nobody_cannot_run_the_suite(); !why.empty()) GTEST_SKIP() << why;
  fs::create_directory(in.dir / "closed");
  fs::permissions(in.dir / "closed", fs::perms::none);
  fs::permissions(in.dir.path, fs::perms::all, fs::perm_options::add);
  Launch nobody;
  nobody.as_nobody = true;
  const CliResult c = run_suite({"--backend", kBaseline, "--images", "1", "--data", (in.dir / "closed").string(),
                                 "--weights", in.weights.string(), "--output", "/tmp/never.json"}, nobody);
  EXPECT_EQ(c.exit_code, 3) << c.err;
  EXPECT_NE(c.err.find("closed: cannot read this directory (Permission denied)"), std::string::npos) << c.err;
}

TEST(NothingLost, AnotherUsersFileInAStickyFolderIsRefusedBeforeTheRun) {
  // In /tmp another user's file can be opened for writing (mode 666) but not renamed over: the run was lost at
  // the end ("cannot write: Operation not permitted").
  if (::getuid() != 0) GTEST_SKIP() << "needs root to own a file that the run (as nobody) cannot replace";
  if (const std::string why = why_nobody_cannot_run_the_suite(); !why.empty()) GTEST_SKIP() << why;
  Inputs in;
  fs::create_directory(in.dir / "sticky");
  fs::permissions(in.dir / "sticky", fs::perms::all | fs::perms::sticky_bit);
  fs::permissions(in.dir.path, fs::perms::all, fs::perm_options::add);
  fs::permissions(in.weights, fs::perms::all, fs::perm_options::add);
  fs::permissions(in.data, fs::perms::all, fs::perm_options::add);
  const fs::path report = in.dir / "sticky" / "report.json";
  write_bytes(report, "root's");
  fs::permissions(report, fs::perms::all);
  Launch how;
  how.as_nobody = true;
  const CliResult r = run_suite(in.args({"--output", report.string()}), how);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot be replaced (another user's file in a sticky folder such as /tmp)"), std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(report), "root's");
}

TEST(NothingLost, MoreThreadsThanTheProcessLimitAreRefused) {
  // `ulimit -u 20` and --threads 64: libgomp's "Thread creation failed", two lines, exit 1.
  if (const std::string why = why_nobody_cannot_run_the_suite(); !why.empty()) GTEST_SKIP() << why;
  Inputs in;
  for (const fs::path& p : {in.dir.path, in.weights, in.data}) fs::permissions(p, fs::perms::all, fs::perm_options::add);
  Launch how;
  how.as_nobody = true;  // root is not held to the process limit
  how.process_limit = 20;
  const CliResult r = run_suite(in.args({"--threads", "64", "--output", "/dev/null"}), how);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "suite: error: the process limit (ulimit -u 20) cannot hold 64 threads; use --threads 10 or fewer, "
                   "or a higher ulimit -u\n");
  const CliResult one_more = run_suite(in.args({"--threads", "21", "--output", "/dev/null"}), how);
  EXPECT_EQ(one_more.exit_code, 2) << one_more.err;
  EXPECT_NE(one_more.err.find("cannot hold 21 threads"), std::string::npos) << one_more.err;
}

// Root is not held to the process limit (Linux lets its threads past RLIMIT_NPROC), so neither is its run.
TEST(NothingLost, RootIsNotHeldToTheProcessLimit) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root passes the process limit";
  Inputs in;
  Launch how;
  how.process_limit = 20;
  const CliResult r = run_suite(in.args({"--threads", "64", "--output", "/dev/null"}), how);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(NothingLost, AnUncreatableDefaultFolderSaysWhy) {
  if (const std::string why = why_nobody_cannot_run_the_suite(); !why.empty()) GTEST_SKIP() << why;
  Inputs in;
  fs::create_directory(in.dir / "ro");
  fs::permissions(in.dir / "ro", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                     fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(in.dir.path, fs::perms::all, fs::perm_options::add);
  fs::permissions(in.weights, fs::perms::all, fs::perm_options::add);
  Launch how;
  how.cwd = in.dir / "ro";
  how.as_nobody = true;
  const CliResult r = run_suite(in.args({}), how);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot create directory 'results/local' (Permission denied)"), std::string::npos) << r.err;
}

TEST(NothingLost, ADeletedWorkingDirectoryIsNamedAsSuch) {
  // `mkdir d && cd d && rmdir ../d && suite ...` said "cannot create directory 'results/local' (No such
  // file or directory)", as if results/ were missing.
  Inputs in;
  for (const bool named : {false, true}) {
    fs::create_directory(in.dir / "gone");
    Launch how;
    how.cwd = in.dir / "gone";
    how.delete_cwd = true;
    const CliResult r = run_suite(in.args(named ? std::vector<std::string>{"--output", "r.json"}
                                                : std::vector<std::string>{}), how);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(named ? "suite: error: r.json: the working directory no longer exists (it was deleted)\n"
                               : "cannot create directory 'results/local': the working directory no longer exists"),
              std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// The tests' launcher says why a child could not run the suite (it exited 127 with an empty stderr).
TEST(NothingLost, TheLauncherSaysWhyTheSuiteDidNotStart) {
  TempDir dir;
  Launch how;
  how.binary = dir / "no-suite-here";
  CliResult r = run_suite({"--version"}, how);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err, "suite test launcher: cannot execute '" + how.binary.string() + "': No such file or directory\n");
  how = Launch{};
  how.cwd = dir / "missing";
  r = run_suite({"--version"}, how);
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_NE(r.err.find("cannot enter '" + how.cwd.string() + "': No such file or directory"), std::string::npos) << r.err;
}

TEST(NothingLost, AFailedRunCreatesNothing) {
  Inputs in;
  Launch how;
  how.cwd = in.dir.path;
  std::vector<std::string> a = in.args({});
  *(std::find(a.begin(), a.end(), in.weights.string())) = (in.dir / "missing").string();
  const CliResult r = run_suite(a, how);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(fs::exists(in.dir / "results")) << "no empty results/local/ left behind";
}

TEST(NothingLost, DataBatchesInNaturalOrderAndEachFileOnce) {
  TempDir dir;
  const Dataset& d = training_images();
  for (int i : {1, 2, 10}) {
    std::string rec(1, char(i % 10));
    rec.append(reinterpret_cast<const char*>(d.image(0)), kImageBytes);
    write_bytes(dir / ("data_batch_" + std::to_string(i) + ".bin"), rec);
  }
  const Dataset got = load_cifar10({dir.path, dir / "data_batch_2.bin"});
  EXPECT_EQ(got.labels, (std::vector<std::uint8_t>{1, 2, 0}));
}

TEST(NothingLost, MessagesAreOneLineWhateverTheBytes) {
  EXPECT_EQ(display(std::string("a\0b\nc\x1b[31m\xff", 11)), "a\\x00b\\x0Ac\\x1B[31m\\xFF");
  EXPECT_EQ(display("naïve ✓"), "naïve ✓");
  // A C1 control, a line separator and a right-to-left override: a break on some terminals, a name reordered.
  EXPECT_EQ(display("a\xc2\x85" "b\xe2\x80\xa8" "c\xe2\x80\xae" "d"), "a\\u{0085}b\\u{2028}c\\u{202E}d");
  const Result r = run_in_process({"--backend", std::string("x\ny\0z", 5), "--quiet"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'x\\x0Ay\\x00z': unknown backend"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const Result big = run_in_process({"--backend", std::string(100000, 'x') + "\xc3\xa9", "--quiet"});  // was one 100 KB line
  EXPECT_EQ(big.code, 2);
  EXPECT_LT(big.err.size(), 1100u) << big.err.size();
  EXPECT_NE(big.err.find(" more bytes)\n"), std::string::npos) << big.err.substr(big.err.size() - 100);
  // The cut at 1000 bytes falls inside an "é" (the line starts "--backend '"): it moves back to the whole letter.
  std::string letters(988, 'x');
  for (int i = 0; i < 20; ++i) letters += "\xc3\xa9";
  const Result cut = run_in_process({"--backend", letters, "--quiet"});
  EXPECT_EQ(cut.err.rfind("suite: error: --backend '" + std::string(988, 'x') + "... (", 0), 0u) << cut.err;
  EXPECT_EQ(cut.err.find("\\x"), std::string::npos) << "half a letter, escaped: " << cut.err;
}

TEST(NothingLost, EmptyValuesAndListItemsAreUsageErrors) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--output", ""}, {"--weights", ""}, {"--save-probs", ""}, {"--data", ""},
        {"--images", "5,"}, {"--images", ",5"}, {"--output="}}) {
    const Result r = run_in_process(args);
    EXPECT_EQ(r.code, 2) << args[0] << " '" << (args.size() > 1 ? args[1] : "") << "'";
  }
}

TEST(NothingLost, AllCombinesWithNamedBackends) {
  Inputs in;
  const fs::path report = in.dir / "r.json";
  std::vector<std::string> a = in.args({"--output", report.string()});
  *(std::find(a.begin(), a.end(), kBaseline)) = kBaseline + ",all," + kBaselineBackend;
  const Result r = run_in_process(a);
  EXPECT_NE(r.code, 2) << r.err;
  const json j = read_json(report);
  EXPECT_EQ(j["runs"][0]["variant"], kBaselineVariant) << "the order asked for";
  int baseline = 0;
  for (const auto& run : j["runs"]) baseline += run["backend"] == kBaselineBackend && run["variant"] == kBaselineVariant;
  EXPECT_EQ(baseline, 1) << "each backend:variant once";
}

// ---- 11: signals

TEST(NothingLost, HangupUserAndAlarmSignalsLeaveNoTemporaryFile) {
  for (const auto& [sig, name] : {std::pair{SIGHUP, "SIGHUP"}, {SIGUSR1, "SIGUSR1"}, {SIGALRM, "SIGALRM"}}) {
    const Interrupted r = interrupt_suite(sig, 2500, "4000");
    ASSERT_TRUE(WIFEXITED(r.status)) << name << " killed the process without the handler";
    EXPECT_EQ(WEXITSTATUS(r.status), 128 + sig);
    EXPECT_NE(r.err.find(std::string("terminated by ") + name + ", no report written"), std::string::npos) << r.err;
    EXPECT_TRUE(r.left.empty()) << name << " left " << r.left[0];
  }
}

TEST(NothingLost, AnIgnoredSigintStaysIgnored) {
  const Interrupted r = interrupt_suite(SIGINT, 300, "200", true);
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
  EXPECT_EQ(r.left, std::vector<std::string>{"r.json"});
}

// The signal handlers in a child process, after `before` (the suite's state when the signal comes), its stderr
// the descriptor `err`: the child's wait status.
template <typename Before>
int raised_in_child(int err, int signal, Before&& before) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err, 2);
    // As a foreground start has it: a background job of a non-interactive shell starts with SIGINT ignored,
    // which the handlers keep (AnIgnoredSigintStaysIgnored), and ctest resets it where a plain run does not.
    ::signal(signal, SIG_DFL);
    install_signal_handlers();
    before();
    ::raise(signal);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// The same, its stderr into dir/stderr.
template <typename Before>
int raised_in_child(const TempDir& dir, int signal, Before&& before) {
  const int err = ::open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int status = raised_in_child(err, signal, std::forward<Before>(before));
  ::close(err);
  return status;
}

TEST(NothingLost, AnInterruptAfterTheReportSaysWhatWasWrittenInOneLine) {
  // It said "(the .npy was not)" also where no .npy was asked for, or after it was written, and began with a
  // blank line where stderr is a file.
  const std::string said = "suite: error: interrupted by SIGINT, the report was written to results/r.json";
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
      {[] { note_report_written("results/r.json", true); }, said + " (the .npy was not)\n"},  // while the .npy is written
      {[] { note_report_written("results/r.json", false); }, said + "\n"},
      {[] { note_report_written("results/r.json", true); note_npy_written(); }, said + "\n"},
  };
  for (const auto& [before, expected] : cases) {
    TempDir dir;
    const int status = raised_in_child(dir, SIGINT, before);
    EXPECT_EQ(WEXITSTATUS(status), 130);
    EXPECT_EQ(slurp(dir / "stderr"), expected);
  }
}

// Every terminating signal is named in its line and ends the process with 128 + its number.
TEST(NothingLost, EachTerminatingSignalIsNamedAndSetsTheExitCode) {
  const std::vector<std::pair<int, std::string>> said = {
      {SIGINT, "interrupted by SIGINT"},  {SIGTERM, "terminated by SIGTERM"}, {SIGHUP, "terminated by SIGHUP"},
      {SIGUSR1, "terminated by SIGUSR1"}, {SIGUSR2, "terminated by SIGUSR2"}, {SIGALRM, "terminated by SIGALRM"}};
  for (const auto& [signal, what] : said) {
    TempDir dir;
    const int status = raised_in_child(dir, signal, [] {});
    ASSERT_TRUE(WIFEXITED(status)) << what << ": killed without the handler";
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal) << what;
    EXPECT_EQ(slurp(dir / "stderr"), "suite: error: " + what + ", no report written\n");
  }
}

// A second run of one process (the tests') starts with nothing written and nothing decided: a signal then
// neither names the earlier report nor ends with the earlier outcome.
TEST(NothingLost, EachRunStartsWithNothingWrittenAndNothingDecided) {
  TempDir dir;
  const int status = raised_in_child(dir, SIGTERM, [] {
    note_report_written("results/r.json", false);
    note_outcome(3);
    install_signal_handlers();
  });
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_EQ(slurp(dir / "stderr"), "suite: error: terminated by SIGTERM, no report written\n");
}

// On a terminal a progress line may be open: the signal's line starts on a line of its own there.
TEST(NothingLost, OnATerminalTheSignalsLineStartsOnItsOwnLine) {
  int terminal = -1, child_side = -1;
  ASSERT_EQ(::openpty(&terminal, &child_side, nullptr, nullptr, nullptr), 0) << std::strerror(errno);
  const int status = raised_in_child(child_side, SIGTERM, [] {});
  ::close(child_side);
  std::string shown;
  char buf[256];
  for (ssize_t n; (n = ::read(terminal, buf, sizeof buf)) > 0;) shown.append(buf, std::size_t(n));
  ::close(terminal);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_EQ(shown, "\r\nsuite: error: terminated by SIGTERM, no report written\r\n");  // the terminal writes \n as \r\n
}

// A signal while a file is being written removes its temporary file: nothing is left, not even half a file.
// The signal is sent when the temporary file appears (inotify); a write that finishes first is tried again larger.
TEST(NothingLost, ASignalDuringAWriteLeavesNoTemporaryFile) {
  for (std::size_t mib = 32; mib <= 1024; mib *= 2) {
    TempDir dir;
    const int watch = ::inotify_init1(IN_CLOEXEC);
    ASSERT_GE(watch, 0) << std::strerror(errno);
    ASSERT_GE(::inotify_add_watch(watch, dir.path.c_str(), IN_CREATE), 0) << std::strerror(errno);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 2);
      ::signal(SIGTERM, SIG_DFL);
      install_signal_handlers();
      const std::string content(mib << 20, 'x');
      write_file_atomically(dir / "r.json", content);
      ::_exit(0);
    }
    char event[4096];
    const ssize_t got = ::read(watch, event, sizeof event);  // the temporary file exists
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(watch);
    ASSERT_GT(got, 0);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) continue;  // written before the signal came
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
    for (const auto& e : fs::directory_iterator(dir.path)) ADD_FAILURE() << "left behind: " << e.path();
    return;
  }
  FAIL() << "every write finished before the signal came";
}

TEST(NothingLost, ACpuTimeLimitEndsWithALineAndNoTemporaryFile) {
  // `ulimit -t`: SIGXCPU's default action killed the suite without a word (exit 152).
  TempDir dir;
  const int status = raised_in_child(dir, SIGXCPU, [] {});
  ASSERT_TRUE(WIFEXITED(status)) << "killed without the handler";
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGXCPU);
  EXPECT_EQ(slurp(dir / "stderr"), "suite: error: stopped by SIGXCPU (the CPU time limit, ulimit -t), no report written\n");
}

// Under mpirun the first rank to exit with the agreed error makes mpirun terminate the others, which may
// still be tearing MPI down after that error was said: they end with its exit code and say nothing more
// (tests/mpi: two lines in about 1 run of 30 before).
TEST(NothingLost, ASignalAfterTheOutcomeIsSaidEndsQuietlyWithItsCode) {
  // As after the agreed error line (3), after a run that passed (0), and a negative code as a failure (1).
  for (const auto& [outcome, code] : {std::pair{3, 3}, {0, 0}, {-5, 1}}) {
    TempDir dir;
    const int status = raised_in_child(dir, SIGTERM, [outcome = outcome] { note_outcome(outcome); });
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), code) << outcome;
    EXPECT_EQ(slurp(dir / "stderr"), "") << outcome;
  }
}

TEST(NothingLost, AFileSizeLimitIsAWriteErrorThatLeavesNothing) {
  // `ulimit -f 1`: the 1024-byte limit is reached inside the report; SIGXFSZ's default action killed the
  // process (exit 153, no message) and left the partial temporary file.
  Inputs in;
  fs::create_directory(in.dir / "run");
  Launch how;
  how.cwd = in.dir / "run";
  how.file_size_limit = 1024;
  for (const bool named : {true, false}) {
    const CliResult r = run_suite(in.args(named ? std::vector<std::string>{"--output", "x.json"}
                                                : std::vector<std::string>{}), how);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(": cannot write: File too large"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& e : fs::recursive_directory_iterator(in.dir / "run"))
      EXPECT_TRUE(e.is_directory()) << "left behind: " << e.path();
  }
}

// ---- 15: the report records the threads that ran: tested by the backend folders whose variants run
// threads (suite_add_backend_tests)

}  // namespace
}  // namespace cnn::test
