// The command line: exit codes, one-line errors, and the report. Most tests call suite_main in-process
// (fast, and with test-only backends such as a faulty one); a few run the real binary.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/nvidia_driver.hpp"
#include "common/registry.hpp"
#include "common/variant_table.hpp"
#include "suite/cli.hpp"
#include "suite/energy.hpp"
#include "suite/runner.hpp"
#include "suite/system_info.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// The baseline with a bug planted in the last image's probabilities: the harness must catch it.
class CorruptingSession : public Session {
 public:
  explicit CorruptingSession(std::unique_ptr<Session> inner) : inner_(std::move(inner)) {}
  double upload(const std::uint8_t* p, std::size_t n) override {
    n_ = n;
    return inner_->upload(p, n);
  }
  double forward(LayerTimes& l) override { return inner_->forward(l); }
  double download(float* probs) override {
    const double ms = inner_->download(probs);
    probs[(n_ - 1) * kClasses] += 0.01f;
    return ms;
  }
  std::size_t batch() const override { return inner_->batch(); }

 private:
  std::unique_ptr<Session> inner_;
  std::size_t n_ = 0;
};

std::unique_ptr<Backend> make_baseline() {
  for (const auto& e : all_backends())
    if (e.name == kBaselineBackend) return e.make();
  return nullptr;
}

std::unique_ptr<Backend> make_faulty() {
  return std::make_unique<VariantTable>(
      "faulty", [] { return Availability{true, "", "CPU"}; },
      std::vector<VariantEntry>{{{"corrupt", "the baseline with one wrong probability", false},
                                 [](const Network& net, const RunConfig& cfg) {
                                   return std::make_unique<CorruptingSession>(make_baseline()->open(kBaselineVariant, net, cfg));
                                 }}});
}

// A CPU backend of one variant whose sessions are a default-constructed S.
template <class S>
std::unique_ptr<Backend> one_variant_backend(const char* name, VariantInfo info) {
  return std::make_unique<VariantTable>(
      name, [] { return Availability{true, "", "CPU"}; },
      std::vector<VariantEntry>{{std::move(info), [](const Network&, const RunConfig&) { return std::make_unique<S>(); }}});
}

std::unique_ptr<Backend> make_unavailable() {
  return std::make_unique<VariantTable>(
      "gpu", [] { return Availability{false, "no CUDA device (test)", ""}; }, std::vector<VariantEntry>{});
}

const std::vector<RegistryEntry>& test_registry() {
  static const std::vector<RegistryEntry> r = {{kBaselineBackend, &make_baseline, ""},
                                               {"faulty", &make_faulty, ""},
                                               {"gpu", &make_unavailable, ""},
                                               {"absent", nullptr, "not built: no toolchain (test)"}};
  return r;
}

struct Result {
  int code;
  std::string err, out;
};

Result run_in_process(std::vector<std::string> args,
                      const std::vector<RegistryEntry>& registry = test_registry()) {
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int code = suite_main(args, registry);
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, ::testing::internal::GetCapturedStderr(), std::move(out)};
}

nlohmann::ordered_json read_ordered_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::ordered_json::parse(in);
}

TEST(Cli, UsageErrorsExit2WithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--images", "0"}, "--images '0': must be at least 1"},
      {{"--images", "-5"}, "--images '-5': not a positive integer"},
      {{"--images", "1e9"}, "--images '1e9': not a positive integer"},
      {{"--images", "1000000000"}, "too large"},
      {{"--images", "abc"}, "not a positive integer"},
      {{"--images", "12,,3"}, "empty item"},
      {{"--batch", "0"}, "--batch '0': must be at least 1"},
      {{"--threads", "x"}, "--threads 'x'"},
      {{"--format", "xml"}, "--format 'xml'"},
      {{"--images"}, "--images: needs a value"},
      {{"--frobnicate"}, "unknown argument '--frobnicate'"},
      {{"--backend", "nosuch"}, "--backend 'nosuch': unknown backend (known: " + kBaselineBackend + ", faulty, gpu, absent)"},
      {{"--backend", kBaselineBackend + ":fast"}, kBaselineBackend + " has no variant 'fast' (variants: " + kBaselineVariant},
      {{"--warmup", "-1"}, "--warmup '-1': not a positive integer"},
      // DEL, a C1 control (U+0085) and a right-to-left override (U+202E) got into tables of reports from anywhere
      {{"--label", "a\x7f" "b"}, "--label: at most 64 bytes of UTF-8, no control characters"},
      {{"--label", "a\xc2\x85" "b"}, "--label: at most 64 bytes of UTF-8, no control characters"},
      {{"--label", "a\xe2\x80\xae" "b"}, "--label: at most 64 bytes of UTF-8, no control characters"},
      {{"--label", "a\xff" "b"}, "--label: at most 64 bytes of UTF-8, no control characters"},
      {{"--label", std::string(65, 'x')}, "--label: at most 64 bytes of UTF-8"},
      {{"--images", "+5"}, "--images '+5': not a positive integer"},
      {{"--images", "10000001"}, "--images '10000001': too large (at most 10000000)"},
      {{"--threads", "4097"}, "--threads '4097': too large (at most 4096)"},
      {{"--data", "a.bin", ""}, "--data: an empty path"},
      {{"--output="}, "--output: needs a value"},
      {{"--quiet=yes"}, "--quiet takes no value"},
      {{"--list=1"}, "--list takes no value"},
  };
  for (const auto& [args, fragment] : cases) {
    const Result r = run_in_process(args);
    EXPECT_EQ(r.code, 2) << args[0];
    expect_one_error_line(r.err, fragment);
  }
}

TEST(Cli, AWarmupOfZeroMayBeWrittenWithLeadingZeros) {
  // "--warmup 00" said "must be at least 1", while 0 is what it asks for.
  const TempDir dir;
  const Result r = run_in_process({"--backend", kBaseline, "--images", "3", "--repeat", "1", "--warmup", "00", "--quiet",
                                   "--label", "h\xc3\xb6st \xe2\x80\x94 one", "--output", (dir / "r.json").string()});
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Cli, EachLimitItselfIsAllowed) {
  const Options o = parse_command_line(
      {"--images", "10000000", "--threads", "4096", "--repeat", "100000", "--label", std::string(64, 'x')});
  EXPECT_EQ(o.images, std::vector<std::size_t>{10000000});
  EXPECT_EQ(o.threads, 4096);
  EXPECT_EQ(o.repeat, 100000);
  EXPECT_EQ(o.label, std::string(64, 'x'));
}

// --help, --version and --list said nothing and exited 0 when their text could not be written (a full disk).
TEST(CliBinary, TextThatCannotBeWrittenIsAnError) {
  for (const std::string flag : {"--help", "--version", "--list"}) {
    Launch how;
    how.stdout_path = "/dev/full";
    const CliResult r = run_suite({flag}, how);
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_EQ(r.err, "suite: error: cannot write to standard output: No space left on device\n") << flag;
  }
}

TEST(Cli, BackendNotBuiltOrWithoutDeviceExits4) {
  Result r = run_in_process({"--backend", "absent", "--quiet"});
  EXPECT_EQ(r.code, 4);
  expect_one_error_line(r.err, "--backend 'absent': not built: no toolchain (test)");
  r = run_in_process({"--backend", "gpu", "--quiet"});
  EXPECT_EQ(r.code, 4);
  expect_one_error_line(r.err, "cannot run here: no CUDA device (test)");
}

TEST(Cli, BadDataOrWeightsExit3) {
  TempDir dir;
  write_bytes(dir / "bad.bin", "xyz");
  Result r = run_in_process({"--backend", kBaselineBackend, "--images", "2", "--data", (dir / "bad.bin").string(),
                             "--output", (dir / "r.json").string(), "--quiet"});
  EXPECT_EQ(r.code, 3);
  expect_one_error_line(r.err, "bad.bin: size 3 is not a multiple of the 3073-byte");
  r = run_in_process({"--backend", kBaselineBackend, "--images", "2", "--weights", (dir / "none").string(), "--output",
                      (dir / "r.json").string(), "--quiet"});
  EXPECT_EQ(r.code, 3);
  expect_one_error_line(r.err, "weight folder not found");
  EXPECT_FALSE(fs::exists(dir / "r.json")) << "no report for a failed run";
}

// `file` of a weight folder rewritten with every weight and bias `value`, its header kept.
void fill_weights(const fs::path& folder, const std::string& file, const std::string& value) {
  std::istringstream in(read_text_file(folder / file));
  const int header_words = file.find("_fc") != std::string::npos ? 2 : 4;  // "inputs outputs", "k k in out"
  std::string text;
  long count = 1, outputs = 0;
  for (int i = 0; i < header_words; ++i) {
    std::string word;
    in >> word;
    text += word + (i + 1 < header_words ? " " : "\n");
    count *= std::stol(word);
    outputs = std::stol(word);
  }
  for (long i = 0; i < count + outputs; ++i) text += value + "\n";
  fs::remove(folder / file);
  write_bytes(folder / file, text);
}

// Weights within float32's range whose activations are not, in each layer alone (the later layers' weights
// scaled down, so that only that layer's outputs are out of range): bad input, exit 3. It was exit 5,
// "validation failed for <the baseline> ... max |p - p_fp64| inf", as if the backends were wrong.
TEST(Cli, WeightsThatDriveALayerBeyondFloat32AreBadInput) {
  const std::vector<std::string> layers = {"layer1_conv.txt", "layer4_conv.txt", "layer7_conv.txt", "layer10_fc.txt"};
  for (std::size_t k = 0; k < layers.size(); ++k) {
    TempDir dir;
    fs::copy(data_dir() / "convnetjs-cifar10", dir / "huge");
    fill_weights(dir / "huge", layers[k], "3e38");
    for (std::size_t later = k + 1; later < layers.size(); ++later) fill_weights(dir / "huge", layers[later], "1e-37");
    const Result r = run_in_process({"--backend", kBaselineBackend, "--images", "2", "--weights",
                                     (dir / "huge").string(), "--output", (dir / "r.json").string(), "--quiet"});
    EXPECT_EQ(r.code, 3) << layers[k] << ": " << r.err;
    expect_one_error_line(r.err, "huge: these weights drive an activation of image 0 to ");
    EXPECT_NE(r.err.find(", beyond float32's range: no FP32 backend can compute it"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.json"));
  }
}

TEST(Cli, CorruptedBackendOutputFailsValidationWithExit5) {
  TempDir dir;
  const Result r = run_in_process({"--backend", kBaseline + ",faulty", "--images", "8", "--output",
                                   (dir / "r.json").string(), "--quiet"});
  EXPECT_EQ(r.code, 5);
  expect_one_error_line(r.err, "validation failed for faulty:corrupt on 8 images");
  const json report = read_json(dir / "r.json");  // the report is written, and says what failed
  ASSERT_EQ(report["runs"].size(), 2u);
  EXPECT_TRUE(report["runs"][0]["validation"]["passed"].get<bool>());
  EXPECT_FALSE(report["runs"][1]["validation"]["passed"].get<bool>());
  EXPECT_NEAR(report["runs"][1]["validation"]["max_abs_prob_diff"].get<double>(), 0.01, 1e-4);
}

// The test backend of tests/throwaway_backend/ is in the real registry of this binary, though no file but its
// own names it: listed, run and validated like any backends/ folder.
TEST(Cli, ARegisteredBackendIsListedRunsAndValidates) {
  TempDir dir;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(suite_main({"--list"}, all_backends()), 0);
  const std::string list = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(list.find("\nthrowaway:fp64 "), std::string::npos) << list;
  EXPECT_NE(list.find("the FP64 reference rounded to FP32"), std::string::npos) << list;
  const int code = suite_main({"--backend", "throwaway", "--images", "12", "--output", (dir / "r.json").string(),
                               "--quiet"},
                              all_backends());
  EXPECT_EQ(code, 0);
  const json report = read_json(dir / "r.json");
  ASSERT_EQ(report["runs"].size(), 1u);
  EXPECT_EQ(report["runs"][0]["backend"], "throwaway");
  EXPECT_EQ(report["runs"][0]["variant"], "fp64");
  EXPECT_TRUE(report["runs"][0]["validation"]["passed"].get<bool>());
  // ... and the report tools show it, though none of them names it either.
  const std::string command = "/usr/bin/python3 " SUITE_SOURCE_DIR "/scripts/report --format csv " + (dir / "r.json").string();
  FILE* tool = ::popen(command.c_str(), "r");
  ASSERT_NE(tool, nullptr);
  std::string table;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, tool)) table.append(buf, n);
  EXPECT_EQ(::pclose(tool), 0) << table;
  EXPECT_NE(table.find("throwaway:fp64"), std::string::npos) << table;
}

TEST(Cli, AllSkipsBackendsThatCannotRunHere) {
  TempDir dir;
  const Result r = run_in_process({"--backend", "all", "--images", "3", "--output", (dir / "r.json").string()});
  EXPECT_EQ(r.code, 5);  // faulty is in "all" here, and fails
  EXPECT_NE(r.err.find("suite: note: skipping gpu: no CUDA device (test)"), std::string::npos) << r.err;
  const json report = read_json(dir / "r.json");
  // every variant of the baseline's backend and faulty:corrupt
  EXPECT_EQ(report["runs"].size(), make_baseline()->variants().size() + 1);
  // --quiet leaves the note out, and says only why the run failed.
  const Result quiet =
      run_in_process({"--backend", "all", "--images", "3", "--output", (dir / "q.json").string(), "--quiet"});
  EXPECT_EQ(quiet.code, 5);
  EXPECT_EQ(quiet.err.find("suite: note:"), std::string::npos) << quiet.err;
}

TEST(Cli, OutputInAMissingOrReadOnlyDirectoryFailsBeforeRunning) {
  TempDir dir;
  Result r = run_in_process({"--backend", kBaselineBackend, "--images", "1", "--output", (dir / "no" / "r.json").string()});
  EXPECT_EQ(r.code, 1);
  expect_one_error_line(r.err, "does not exist");
  r = run_in_process({"--backend", kBaselineBackend, "--images", "1", "--output", "/dev/full", "--quiet"});
  EXPECT_EQ(r.code, 1);
  expect_one_error_line(r.err, "/dev/full: cannot write: No space left on device");
}

TEST(Cli, CyclesImagesAndRecordsHowManyWereDistinct) {
  TempDir dir;
  std::string bytes;
  const Dataset& d = training_images();
  for (int i = 0; i < 5; ++i) {
    bytes.push_back(char(d.labels[i]));
    bytes.append(reinterpret_cast<const char*>(d.image(i)), kImageBytes);
  }
  write_bytes(dir / "five.bin", bytes);
  const Result r = run_in_process({"--backend", kBaseline, "--images", "5,12", "--data", (dir / "five.bin").string(),
                                   "--output", (dir / "r.json").string(), "--save-probs",
                                   (dir / "p.npy").string(), "--quiet", "--repeat", "2", "--warmup", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json report = read_json(dir / "r.json");
  ASSERT_EQ(report["runs"].size(), 2u);
  const json& run = report["runs"][1];
  EXPECT_EQ(run["images"], 12);
  EXPECT_EQ(run["distinct_images"], 5);
  EXPECT_EQ(run["forward_ms"]["samples"].size(), 2u);
  EXPECT_TRUE(run["validation"]["passed"].get<bool>());
  EXPECT_EQ(run["validation"]["compared"], 12);
  // The .npy holds the last run: 12 x 10 float32 after a 128-byte header (this header fits in 128).
  EXPECT_EQ(fs::file_size(dir / "p.npy"), 128u + 12 * 10 * 4);
  std::ifstream npy(dir / "p.npy", std::ios::binary);
  std::string head(128, '\0');
  npy.read(head.data(), 128);
  EXPECT_EQ(head.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(head.find("'descr': '<f4', 'fortran_order': False, 'shape': (12, 10)"), std::string::npos);
  EXPECT_EQ(head.back(), '\n');
}

// The report records the flags each backend folder was compiled with, from compile_commands.json: the
// OpenMP backend's -fopenmp and the CPU kernels' -march (neither is in CMAKE_CXX_FLAGS).
TEST(Cli, ReportRecordsEachBackendsCompilerFlags) {
  TempDir dir;
  const Result r = run_in_process(
      {"--backend", kBaseline, "--images", "2", "--output", (dir / "r.json").string(), "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto flags = read_ordered_json(dir / "r.json")["meta"]["compiler"]["backend_flags"];
  // The baseline is single-threaded C++: built without -fopenmp (an OpenMP folder's -fopenmp is checked there).
  ASSERT_TRUE(flags.contains(kBaselineBackend)) << flags.dump();
  EXPECT_NE(flags[kBaselineBackend].get<std::string>().find("-std=c++20"), std::string::npos) << flags[kBaselineBackend];
  EXPECT_EQ(flags[kBaselineBackend].get<std::string>().find("-fopenmp"), std::string::npos) << flags[kBaselineBackend];
  ASSERT_TRUE(flags.contains("kernels/cpu"));  // the shared kernels of common/kernels/cpu
  EXPECT_NE(flags["kernels/cpu"].get<std::string>().find("-march="), std::string::npos) << flags["kernels/cpu"];
  for (const auto& [folder, line] : flags.items())
    EXPECT_EQ(line.get<std::string>().find(" -I"), std::string::npos) << folder << ": include paths left in";
}

TEST(Cli, ReportHasTheDocumentedSchema) {
  TempDir dir;
  const Result r = run_in_process(
      {"--backend", kBaseline, "--images", "4", "--output", (dir / "r.json").string(), "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = read_ordered_json(dir / "r.json");
  EXPECT_EQ(j["schema_version"], 1);
  for (const char* k : {"suite_version", "git_commit", "git_dirty", "compiler", "build_type", "host", "cpu_model",
                        "logical_cores", "boot_id", "threads", "date_utc"})
    EXPECT_TRUE(j["meta"].contains(k)) << k;
  // The history compares times only within one boot of a machine: the report must name the boot it ran in.
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (std::getline(boot, boot_id)) EXPECT_EQ(j["meta"]["boot_id"], boot_id);
  const auto& run = j["runs"][0];
  for (const char* k : {"backend", "variant", "images", "distinct_images", "batch", "phases_ms", "layers_ms",
                        "forward_ms", "images_per_s", "accuracy", "validation"})
    EXPECT_TRUE(run.contains(k)) << k;
  for (const char* k : {"load", "setup", "forward", "total"}) EXPECT_TRUE(run["phases_ms"].contains(k)) << k;
  // A CPU run's total is its setup and its forward pass (the median); loading is apart from it.
  const auto& phases = run["phases_ms"];
  EXPECT_DOUBLE_EQ(phases["total"].get<double>(), phases["setup"].get<double>() + phases["forward"].get<double>());
  EXPECT_EQ(phases["forward"], run["forward_ms"]["median"]);
  EXPECT_GT(phases["load"].get<double>(), 0.0);
  std::vector<std::string> layer_order;
  for (const auto& [name, ms] : run["layers_ms"].items()) layer_order.push_back(name);
  std::vector<std::string> spec_order;
  for (const auto& l : kLayers) spec_order.emplace_back(l.name);
  EXPECT_EQ(layer_order, spec_order) << "network order, not alphabetical";
  for (const char* k : {"min", "median", "max", "samples"}) EXPECT_TRUE(run["forward_ms"].contains(k)) << k;
  for (const char* k : {"reference", "compared", "top1_mismatches", "max_abs_prob_diff", "tolerance", "passed"})
    EXPECT_TRUE(run["validation"].contains(k)) << k;
  EXPECT_EQ(run["validation"]["reference"], "fp64");
}

// ---- the real binary

// The thesis' figure through the binary: 78.25 % on the first 1200 images (every variant must give it; the
// baseline, the thesis' port, takes a few seconds), and the per-layer table of a layer-wise variant (the
// baseline is one).
TEST(CliBinary, Gives7825PercentOn1200ImagesAndTimesLayers) {
  TempDir dir;
  const CliResult r = run_suite({"--backend", kBaseline, "--images", "1200", "--repeat", "1", "--warmup", "0",
                                 "--output", (dir / "r.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("accuracy 78.25 %"), std::string::npos) << r.out;
  const json j = read_json(dir / "r.json");
  EXPECT_DOUBLE_EQ(j["runs"][0]["accuracy"].get<double>(), 0.7825);
  EXPECT_TRUE(j["runs"][0]["validation"]["passed"].get<bool>());
  const CliResult layers = run_suite({"--backend", kBaseline, "--images", "20", "--repeat", "1", "--warmup",
                                      "0", "--output", (dir / "l.json").string()});
  ASSERT_EQ(layers.exit_code, 0) << layers.err;
  EXPECT_NE(layers.out.find("conv1"), std::string::npos) << "per-layer table";
}

TEST(CliBinary, ListNamesEveryBackendAndErrorsAreOneLine) {
  const CliResult list = run_suite({"--list"});
  EXPECT_EQ(list.exit_code, 0);
  for (const auto& b : backend_folders()) EXPECT_NE(list.out.find("\n" + b), std::string::npos) << b;
  EXPECT_NE(list.out.find(kBaseline), std::string::npos);
  EXPECT_EQ(list.out.find("throwaway"), std::string::npos) << "the test backend is linked into the tests only";
  const CliResult bad = run_suite({"--images", "abc"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "suite: error: --images 'abc': not a positive integer\n");
  const CliResult help = run_suite({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("exit codes"), std::string::npos);
}

// ---- reliability: each row of the README's failure table has a test here or above.

TEST(Failures, OversizedDataFileIsRefusedBeforeReading) {
  TempDir dir;
  const auto big = dir / "big.bin";
  write_bytes(big, "");
  fs::resize_file(big, kMaxBatchFileBytes + kRecordBytes);  // sparse: no disk space used
  const Result r = run_in_process({"--backend", kBaselineBackend, "--images", "1", "--data", big.string(), "--quiet",
                                   "--output", (dir / "r.json").string()});
  EXPECT_EQ(r.code, 3);
  expect_one_error_line(r.err, "MiB limit for one CIFAR-10 batch file");
}

TEST(Failures, DirectoryWhereAFileIsExpected) {
  TempDir dir;
  fs::create_directory(dir / "out.json");
  Result r = run_in_process({"--backend", kBaselineBackend, "--images", "1", "--output", (dir / "out.json").string()});
  EXPECT_EQ(r.code, 1);
  expect_one_error_line(r.err, "out.json: is a directory");
  r = run_in_process({"--backend", kBaselineBackend, "--images", "1", "--output", (dir / "r.json").string(),
                      "--save-probs", dir.path.string()});
  EXPECT_EQ(r.code, 1);
  expect_one_error_line(r.err, "is a directory");
}

// A binary linked with the GPU vendor libraries cannot start under `ulimit -v 600000`: the loader cannot map
// libcublasLt's 500 MB before main. A CPU run maps none of them, and validates.
TEST(Failures, ACpuRunNeedsNoRoomForGpuLibraries) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
  TempDir dir;
  const CliResult r = run_suite({"--backend", kBaselineBackend, "--images", "100", "--quiet", "--output",
                                 (dir / "r.json").string()},
                                within_small_address_space());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = read_json(dir / "r.json");
  ASSERT_FALSE(report["runs"].empty());
  for (const json& run : report["runs"]) EXPECT_TRUE(run["validation"]["passed"].get<bool>()) << run["variant"];
}

TEST(Failures, ReadOnlyOutputDirectoryEvenForRoot) {
  const Result r = run_in_process({"--backend", kBaselineBackend, "--images", "1", "--output", "/proc/suite-report.json"});
  EXPECT_EQ(r.code, 1);
  expect_one_error_line(r.err, "directory '/proc' is not writable");
}

// The default report's folder, in a folder that takes no new entry (/proc, even for root), is refused before
// the run: the faulty backend would otherwise run and fail its validation first.
TEST(Failures, AnUncreatableDefaultReportFolderIsFoundBeforeTheRun) {
  const fs::path here = fs::current_path();
  fs::current_path("/proc");
  const Result r = run_in_process({"--backend", "faulty", "--images", "1"});
  fs::current_path(here);
  EXPECT_EQ(r.code, 1);
  expect_one_error_line(r.err, ": cannot create directory 'results/local' (");
  EXPECT_EQ(r.out, "") << "nothing ran";
}

// A signal in the middle of a long run: a clear line, exit 128 + signal, and no report or temporary file.
void expect_clean_interrupt(int sig, int expected_code, const char* expected_line) {
  // After loading and the reference, inside the forward pass.
  // 4 s: the start-up may execute the suite a second time (suite/main.cpp), and a busy machine slows both.
  const Interrupted r = interrupt_suite(sig, 4000, "4000");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), expected_code);
  EXPECT_NE(r.err.find(expected_line), std::string::npos) << r.err;
  for (const auto& name : r.left) ADD_FAILURE() << "left behind: " << name;
}

TEST(Failures, SigintMidRunLeavesNoReportAndExits130) {
  expect_clean_interrupt(SIGINT, 130, "suite: error: interrupted by SIGINT, no report written");
}

TEST(Failures, SigtermMidRunLeavesNoReportAndExits143) {
  expect_clean_interrupt(SIGTERM, 143, "suite: error: terminated by SIGTERM, no report written");
}

// A backend that does no arithmetic: it answers 0.1 for every class (so validation fails, exit 5), which
// isolates the harness' own memory use.
class UniformSession : public HostSession {
 public:
  double forward(LayerTimes&) override {
    std::fill(probs_.begin(), probs_.end(), 0.1f);
    return 0;
  }
  std::size_t batch() const override { return n_; }
};

std::unique_ptr<Backend> make_uniform() {
  return one_variant_backend<UniformSession>("uniform", {"tenth", "every probability 0.1", false});
}

// The README's bound: host peak <= the data set + N x 3072 (the images, cycled) + N x 80 (two N x 10
// float buffers) + 128 MiB (program, weights, reference, allocator slack).
TEST(Memory, HostPeakStaysWithinTheImagesPlusABoundedWorkingSet) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's shadow memory (1/8 of every byte touched: 115 MB for these images) and its quarantine of freed
  // blocks count in the peak RSS; the bound is the suite's, checked in the plain builds.
  GTEST_SKIP() << "the host-memory bound is checked without AddressSanitizer";
#endif
  // EXPECT_EXIT forks (a fresh exec of this big test binary would count its own pages against the bound):
  // after earlier tests of this process started OpenMP threads, the child deadlocks in its first parallel
  // region. ctest runs every test in a process of its own, where there are none.
  const auto threads = std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator{});
  if (threads > 1)
    GTEST_SKIP() << threads << " threads in this process: run this test alone (ctest does), a fork would deadlock";
  TempDir dir;
  std::string five;
  for (int i = 0; i < 5; ++i) {
    five.push_back(char(training_images().labels[i]));
    five.append(reinterpret_cast<const char*>(training_images().image(i)), kImageBytes);
  }
  write_bytes(dir / "five.bin", five);
  const std::size_t n = 300000;
  const std::vector<RegistryEntry> registry = {{"uniform", &make_uniform, ""}};
  const fs::path report = dir / "r.json";
  EXPECT_EXIT(
      {
        const int code = suite_main({"--backend", "uniform", "--images", std::to_string(n), "--data",
                                     (dir / "five.bin").string(), "--output", report.string(), "--quiet"},
                                    registry);
        std::exit(code);
      },
      ::testing::ExitedWithCode(5), "validation failed for uniform:tenth");
  const json j = read_json(report);
  const double peak = j["runs"][0]["memory_bytes"]["host_peak"].get<double>();
  const double bound = 5.0 * kRecordBytes + n * 3072.0 + n * 80.0 + 128.0 * (1 << 20);
  EXPECT_GT(peak, n * 3072.0) << "the cycled images must be counted: is the measurement real?";
  EXPECT_LE(peak, bound) << "host peak " << peak / 1e6 << " MB, bound " << bound / 1e6 << " MB";
}

// On a machine without NVIDIA's driver (CI), the CUDA backends (kind gpu without a host fallback, in their
// manifests) say so, not "driver version is insufficient".
TEST(CliBinary, NoNvidiaDriverIsNamedAsSuch) {
  if (nvidia_driver_present()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  bool any_cuda = false;
  for (const auto& e : all_backends()) {
    if (!e.make || e.kind != "gpu" || backend_manifest(e.name).value("host_fallback", false)) continue;
    any_cuda = true;
    const Availability a = e.make()->availability();
    EXPECT_FALSE(a.runnable);
    EXPECT_NE(a.reason.find("no NVIDIA driver (libcuda.so.1 not found)"), std::string::npos) << e.name << ": " << a.reason;
  }
  if (!any_cuda) GTEST_SKIP() << "no CUDA backend built";
}

// The suite's OpenMP defaults (suite/main.cpp) hold unless the user chose otherwise, and the report says what
// ran: threads spin briefly, then sleep (a chosen policy keeps libgomp's spin count for it; a chosen spin count
// is kept), and they are bound as Kokkos::OpenMP recommends.
TEST(CliBinary, OpenMpDefaultsHoldUnlessTheUserChose) {
  const struct {
    std::vector<std::string> env;
    std::map<std::string, std::string> meta;
  } cases[] = {
      {{}, {{"openmp_wait_policy", "PASSIVE"}, {"openmp_spin_count", "10000"}, {"openmp_proc_bind", "spread"},
            {"openmp_places", "threads"}}},
      {{"OMP_WAIT_POLICY=ACTIVE"}, {{"openmp_wait_policy", "ACTIVE"}, {"openmp_spin_count", ""}}},
      {{"GOMP_SPINCOUNT=77"}, {{"openmp_wait_policy", "PASSIVE"}, {"openmp_spin_count", "77"}}},
      {{"OMP_PROC_BIND=false"}, {{"openmp_proc_bind", "false"}, {"openmp_places", "threads"}}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    const CliResult r = run_suite_with_env(baseline_run(3, dir / "r.json"), c.env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json meta = read_json(dir / "r.json")["meta"];
    for (const auto& [key, value] : c.meta)
      EXPECT_EQ(meta[key], value) << key << " with " << (c.env.empty() ? "no variable set" : c.env[0]);
  }
}

// Every run says how much energy an image takes, from windows of at least a second of passes with their
// spread, or why it cannot (RAPL unreadable, no NVML).
TEST(Cli, EveryRunRecordsItsEnergyOrWhyNot) {
  TempDir dir;
  ASSERT_EQ(run_in_process({"--backend", kBaseline, "--images", "4", "--repeat", "2", "--warmup", "0",
                            "--output", (dir / "r.json").string(), "--quiet"}).code, 0);
  const json j = read_json(dir / "r.json");
  const json& e = j["runs"][0]["energy"];
  EXPECT_EQ(e["source"], "rapl");
  const EnergyCounter rapl = EnergyCounter::cpu();
  if (rapl.available()) {
    EXPECT_EQ(e["windows"], 3);
    EXPECT_GE(e["window_ms"].get<double>(), 1000.0);
    EXPECT_LE(e["images_per_j_min"].get<double>(), e["images_per_j"].get<double>());
    EXPECT_GE(e["images_per_j_max"].get<double>(), e["images_per_j"].get<double>());
    EXPECT_EQ(j["meta"]["energy"]["cpu"], "rapl");
  } else {
    EXPECT_EQ(e["unavailable"], rapl.why_not());
    EXPECT_EQ(j["meta"]["energy"]["cpu"], rapl.why_not());
    EXPECT_NE(rapl.why_not().find("RAPL not readable"), std::string::npos);
  }
}

// The baseline's arithmetic, said to run on a GPU whose data is not resident there, as the naive offload variants
// do (they copy per layer): its energy is the GPU's, not the CPU package's.
class GpuWithoutResidentDataSession : public Session {
 public:
  explicit GpuWithoutResidentDataSession(std::unique_ptr<Session> inner) : inner_(std::move(inner)) {}
  double upload(const std::uint8_t* p, std::size_t n) override { return inner_->upload(p, n); }
  double forward(LayerTimes& l) override { return inner_->forward(l); }
  double download(float* probs) override { return inner_->download(probs); }
  std::size_t batch() const override { return inner_->batch(); }
  bool runs_on_gpu() const override { return true; }
  std::vector<std::pair<std::string, std::string>> device_info() const override {
    return {{"gpu_name", "test GPU"}, {"gpu_pci_bus_id", kBus}};
  }
  static constexpr const char* kBus = "0000:ff:1f.7";  // no GPU's

 private:
  std::unique_ptr<Session> inner_;
};

std::unique_ptr<Backend> make_offloaded() {
  return std::make_unique<VariantTable>(
      "offloaded", [] { return Availability{true, "", "test GPU"}; },
      std::vector<VariantEntry>{{{"naive", "the baseline, said to run on a GPU", false},
                                 [](const Network& net, const RunConfig& cfg) {
                                   return std::make_unique<GpuWithoutResidentDataSession>(
                                       make_baseline()->open(kBaselineVariant, net, cfg));
                                 }}});
}

TEST(Cli, ARunOnAGpuIsMeasuredByTheGpusCounterEvenWithoutResidentData) {
  const std::vector<RegistryEntry> registry = {{"offloaded", &make_offloaded, ""}};
  TempDir dir;
  const Result r = run_in_process({"--backend", "offloaded", "--images", "4", "--repeat", "2", "--warmup", "0",
                                   "--output", (dir / "r.json").string(), "--quiet"}, registry);
  ASSERT_EQ(r.code, 0) << r.err;
  const json e = read_json(dir / "r.json")["runs"][0]["energy"];
  EXPECT_EQ(e["source"], "nvml");
  EXPECT_EQ(e["unavailable"], EnergyCounter::gpu(GpuWithoutResidentDataSession::kBus).why_not());
}

// Thread counts from the environment obey the limit of --threads: libgomp would start a team of that many
// at the first parallel region (a team of 100000 crashes inside libgomp), so they are refused before it.
TEST(CliBinary, ThreadCountsInTheEnvironmentAreLimitedLikeThreads) {
  TempDir dir;
  const std::vector<std::string> args = baseline_run(20, dir / "r.json");
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"OMP_NUM_THREADS=100000", "OMP_NUM_THREADS='100000': more than 4096 threads (the limit of --threads)"},
      {"OMP_NUM_THREADS=4,5000", "OMP_NUM_THREADS='4,5000': more than 4096 threads"},
      {"OMP_NUM_THREADS= 30000 ", "OMP_NUM_THREADS=' 30000 ': more than 4096 threads"},
      {"OMP_NUM_THREADS=abc", "OMP_NUM_THREADS='abc': not a positive thread count or comma-separated list of them"},
      {"OMP_NUM_THREADS=2,", "OMP_NUM_THREADS='2,': not a positive thread count"},
      {"OMP_NUM_THREADS_ALL=100000", "OMP_NUM_THREADS_ALL='100000': more than 4096 threads"},
      {"KOKKOS_NUM_THREADS=100000", "KOKKOS_NUM_THREADS='100000': more than 4096 threads"},
  };
  for (const auto& [env, line] : refused) {
    const CliResult r = run_suite_with_env(args, {env});
    EXPECT_EQ(r.exit_code, 2) << env << ": " << r.err;
    EXPECT_EQ(r.err.rfind("suite: error: " + line, 0), 0u) << env << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << env << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.json")) << env;
  }
  for (const std::string env : {"OMP_NUM_THREADS= 2 , 1", "OMP_NUM_THREADS=4096", "KOKKOS_NUM_THREADS=2"}) {
    const CliResult r = run_suite_with_env(args, {env});
    EXPECT_EQ(r.exit_code, 0) << env << ": " << r.err;
  }
}

// An installed suite (<prefix>/bin/suite) reads only <prefix>/share/cnn-suite/data: with that folder gone it
// said nothing and read, and recorded, the build tree's data instead.
TEST(CliBinary, AnInstalledSuiteReadsOnlyItsInstalledData) {
  TempDir prefix, elsewhere;
  Launch how;
  how.binary = copy_suite_binary(prefix / "bin");  // what `cmake --install` puts in <prefix>/bin
  how.cwd = elsewhere.path;
  const std::vector<std::string> args = {"--backend", kBaseline, "--images", "3", "--quiet", "--output", "r.json"};
  const fs::path data = prefix / "share" / "cnn-suite" / "data";
  CliResult r = run_suite(args, how);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "suite: error: " + data.string() +
                       ": the suite's data folder is missing (reinstall, or give --data and --weights)\n");
  EXPECT_FALSE(fs::exists(elsewhere / "r.json"));

  fs::create_directories(data);
  fs::copy(data_dir(), data, fs::copy_options::recursive);
  r = run_suite(args, how);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(elsewhere / "r.json")["meta"]["data"][0], (data / "cifar10" / "data_batch_1.bin").string());
}

// Every probability 0.1, as the reference gives with an all-zero fully connected layer; its end-to-end pass
// nudges class 1 up by 1e-6: a different top-1 where the reference's classes tie, a near tie in each image.
class TiedSession : public UniformSession {
 public:
  std::optional<EndToEnd> end_to_end(const std::uint8_t*, std::size_t n, float* probs) override {
    std::fill(probs, probs + n * kClasses, 0.1f);
    for (std::size_t i = 0; i < n; ++i) probs[i * kClasses + 1] += 1e-6f;
    return EndToEnd{0.5, 0.25};
  }
};

// The shipped weights with an all-zero fully connected layer: the reference then gives 0.1 for every class.
fs::path zero_fc_weights(const TempDir& dir) {
  fs::copy(data_dir() / "convnetjs-cifar10", dir / "weights");
  std::string zero_fc = "320 10\n";
  for (int i = 0; i < 320 * 10 + 10; ++i) zero_fc += "0\n";
  write_bytes(dir / "weights" / "layer10_fc.txt", zero_fc);
  return dir / "weights";
}

// The report's one run of test backend `name` (made by `make`) on the zero-FC weights, run in this process
// with `args` added; a failed run is a test failure (and an empty run).
json run_on_zero_fc(const std::string& name, std::unique_ptr<Backend> (*make)(), std::vector<std::string> args) {
  TempDir dir;
  const std::vector<RegistryEntry> registry = {{name, make, ""}};
  args.insert(args.begin(), {"--backend", name, "--weights", zero_fc_weights(dir).string(), "--quiet", "--output",
                             (dir / "r.json").string()});
  const Result res = run_in_process(args, registry);
  EXPECT_EQ(res.code, 0) << res.err;
  return res.code == 0 ? read_json(dir / "r.json")["runs"][0] : json();
}

std::unique_ptr<Backend> make_tied() {
  return one_variant_backend<TiedSession>("tied", {"e2e", "0.1 everywhere, class 1 nudged in the end-to-end pass", false});
}

// A variant's former name (a script's) runs what it became, with a note unless --quiet.
TEST(CliBinary, AFormerVariantNameRunsTheRenamedVariantWithANote) {
  const auto& renamed = renamed_variants();
  const auto it = std::find_if(renamed.begin(), renamed.end(), [](const RenamedVariant& r) {
    return r.backend == kBaselineBackend;
  });
  if (it == renamed.end()) GTEST_SKIP() << "the baseline's backend has renamed no variant";
  TempDir dir;
  const std::string old_name = it->backend + ":" + it->old_name;
  for (const bool quiet : {false, true}) {
    std::vector<std::string> args = {"--backend", old_name, "--images", "3", "--repeat", "1", "--warmup", "0",
                                     "--output", (dir / "r.json").string()};
    if (quiet) args.push_back("--quiet");
    const CliResult r = run_suite(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string note = "suite: note: " + old_name + " is now called " + it->backend + ":" + it->new_name +
                             "; running that\n";
    EXPECT_EQ(r.err.find(note) != std::string::npos, !quiet) << r.err;
    const json j = read_json(dir / "r.json");
    ASSERT_EQ(j["runs"].size(), 1u);
    EXPECT_EQ(j["runs"][0]["variant"], it->new_name);
  }
}

// Progress on a terminal counts the images and is wiped at the end, so that the table starts on a clean line;
// --quiet shows none.
TEST(CliBinary, ProgressOnATerminalIsWipedAtTheEnd) {
  TempDir dir;
  for (const bool quiet : {false, true}) {
    Launch how;
    how.stderr_on_terminal = true;
    how.stdout_path = "/dev/null";
    std::vector<std::string> args = baseline_run(20, dir / "r.json");
    if (!quiet) args.erase(std::find(args.begin(), args.end(), "--quiet"));
    const CliResult r = run_suite(args, how);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (quiet) {
      EXPECT_EQ(r.err, "");
      continue;
    }
    const std::size_t shown = r.err.find("\r  " + kBaseline + ": 20 / 20 images (100 %)   ");
    ASSERT_NE(shown, std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\r" + std::string(kBaseline.size() + 48, ' ') + "\r", shown), std::string::npos) << r.err;
  }
}

// run_one merged the end-to-end pass's validation into the run's but dropped its near_ties.
TEST(Cli, NearTiesOfTheEndToEndPassAreReported) {
  const json run = run_on_zero_fc("tied", &make_tied, {"--images", "6", "--repeat", "1", "--warmup", "0"});
  ASSERT_FALSE(run.is_null());
  const json v = run["validation"];
  EXPECT_EQ(v["near_ties"], 6);
  EXPECT_EQ(v["top1_mismatches"], 0);
  EXPECT_TRUE(v["passed"].get<bool>());
  EXPECT_NEAR(v["max_abs_prob_diff"].get<double>(), 1e-6, 1e-7);
  // Both end-to-end times reach the report, the images' copy alone beside the overlapped pass.
  const json phases = run["phases_ms"];
  EXPECT_EQ(phases["end_to_end"], 0.5);
  EXPECT_EQ(phases["h2d_pinned"], 0.25);
}

// Passes of a scripted length, as a GPU backend reports its own: the k-th forward of a session (from 0) takes
// g_pace_first_ms where k is 0 and that is set, else g_pace_ms + k; its one layer takes the pass's time.
double g_pace_ms = 0, g_pace_first_ms = 0;
class PacedSession : public UniformSession {
 public:
  double forward(LayerTimes& layers) override {
    UniformSession::forward(layers);
    const double ms = calls_ == 0 && g_pace_first_ms > 0 ? g_pace_first_ms : g_pace_ms + calls_;
    ++calls_;
    layers = {{"conv1", ms}};
    return ms;
  }

 private:
  int calls_ = 0;
};

std::unique_ptr<Backend> make_paced() {
  return one_variant_backend<PacedSession>("paced", {"scripted", "passes of scripted length", true});
}

// The default sampling (README, --repeat and --warmup): one untimed pass, unless it took over a second (then it
// is the only sample), then passes until 5 or about a second of them; layer times are their mean.
TEST(Cli, DefaultSamplingFollowsThePassesLength) {
  const auto run = [&](double pace, double first) {
    g_pace_ms = pace;
    g_pace_first_ms = first;
    const json r = run_on_zero_fc("paced", &make_paced, {"--images", "2"});
    if (r.is_null()) return std::pair(std::vector<double>{}, 0.0);
    return std::pair(r["forward_ms"]["samples"].get<std::vector<double>>(), r["layers_ms"]["conv1"].get<double>());
  };
  // 300 ms passes: the warm-up (300), then 301 + 302 + 303 + 304 >= 1 s.
  auto [samples, conv1] = run(300, 0);
  EXPECT_EQ(samples, (std::vector<double>{301, 302, 303, 304}));
  EXPECT_DOUBLE_EQ(conv1, 302.5);
  // 10 ms passes: five of them.
  std::tie(samples, conv1) = run(10, 0);
  EXPECT_EQ(samples, (std::vector<double>{11, 12, 13, 14, 15}));
  EXPECT_DOUBLE_EQ(conv1, 13);
  // A first pass of 1.5 s is kept as the one sample, not repeated.
  std::tie(samples, conv1) = run(1400, 1500);
  EXPECT_EQ(samples, (std::vector<double>{1500}));
  EXPECT_DOUBLE_EQ(conv1, 1500);
}

}  // namespace
}  // namespace cnn::test
