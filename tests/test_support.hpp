// Shared fixtures for the tests: the embedded data, loaded once, and a way to run the real `suite`
// binary and see its exit code, stdout and stderr.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/network.hpp"
#include "suite/dataset.hpp"
#include "suite/report.hpp"

namespace cnn::test {

// The baseline every speedup is measured against, from the manifests (the one with "baseline", read by
// tests/CMakeLists.txt): a CPU backend without dependencies, built wherever the tests are, so the tests
// that need a real run run it and name no backend.
inline const std::string kBaselineBackend = SUITE_BASELINE_BACKEND;
inline const std::string kBaselineVariant = SUITE_BASELINE_VARIANT;
inline const std::string kBaseline = kBaselineBackend + ":" + kBaselineVariant;

std::filesystem::path data_dir();                 // the embedded data/ folder
// The backend folders of the source tree, sorted: every folder under backends/ is a backend (shared code
// lives in common/kernels/), read from the tree itself, apart from the build's list that it is checked against.
std::vector<std::string> backend_folders();
// backends/<name>/manifest.json of the source tree (throws when it cannot be read or parsed).
nlohmann::json backend_manifest(const std::string& name);
const Dataset& training_images();                 // data/cifar10 (4000 images)
const Network& trained_network();                 // data/convnetjs-cifar10
const std::vector<double>& reference_first(std::size_t n);  // FP64 reference of the first n images, cached
bool backend_built(const std::string& name);      // in this build's registry, with a way to make it

struct CliResult {
  int exit_code;
  std::string out, err;
};
// Runs build/<preset>/bin/suite with these arguments (no shell: each one is passed as is).
CliResult run_suite(const std::vector<std::string>& args);

// The same, with the process set up as a user or a hostile environment would.
struct Launch {
  std::filesystem::path cwd;                    // empty: this process's
  std::string stdout_path;                      // empty: captured into CliResult::out
  std::vector<std::string> env;                 // "NAME=value" added to this environment, "NAME" removed from it
  bool ignore_sigint = false;                   // as nohup or a background job would
  // Drop root (uid/gid 65534) when running as root; the binary then runs from a copy that nobody can reach.
  bool as_nobody = false;
  long file_size_limit = -1;                    // RLIMIT_FSIZE in bytes (`ulimit -f`); -1: inherited
  long address_space_limit = -1;                // RLIMIT_AS in bytes (`ulimit -v` x 1024); -1: inherited
  long process_limit = -1;                      // RLIMIT_NPROC (`ulimit -u`; root is not held to it); -1: inherited
  long stack_limit = -1;                        // RLIMIT_STACK in bytes (`ulimit -s` x 1024); -1: inherited
  bool delete_cwd = false;                      // remove `cwd` once in it (a shell in a deleted folder)
  bool close_stdout = false;                    // start with descriptor 1 closed (`suite ... >&-`)
  bool stdout_pipe_closed = false;              // stdout a pipe whose reader has gone (`| head`): EPIPE
  std::filesystem::path binary;                 // empty: the build tree's suite
  bool stderr_on_terminal = false;              // stderr a pseudo-terminal (progress is shown); err: what it showed
};
// Launch problems (a cwd that cannot be entered, exec failing) end the child with 124-127 and one line
// on its stderr, "suite test launcher: ...", that says why.
CliResult run_suite(const std::vector<std::string>& args, const Launch& how);
// run_suite with only environment additions ("NAME=value").
inline CliResult run_suite_with_env(const std::vector<std::string>& args, std::vector<std::string> env) {
  Launch how;
  how.env = std::move(env);
  return run_suite(args, how);
}

// The DT_NEEDED entries of a 64-bit ELF file (the libraries the loader maps before main), in file order;
// throws std::runtime_error for anything else.
std::vector<std::string> needed_libraries(const std::filesystem::path& elf);

// How the tests show that a CPU run maps no GPU vendor library: RLIMIT_AS of 256 MiB, where a CPU run of
// 100 images needs about 75 MiB and a binary linked with cuDNN and cuBLAS cannot start below 743 MiB
// (libcublasLt alone maps 500 MB; measured on a 2-core EPYC, 2026-11-24). OMP_NUM_THREADS=2 keeps the need
// the same on every machine: each thread of the FP64 reference's OpenMP loop reserves an 8 MiB stack.
Launch within_small_address_space();

// Copies the suite binary and the build tree's shared libraries it loads (ldd) into `dir`; returns the
// copy's path. It finds those libraries through its RUNPATH, or LD_LIBRARY_PATH=dir where that cannot be reached.
std::filesystem::path copy_suite_binary(const std::filesystem::path& dir);
// Empty when Launch::as_nobody can run the suite; else why not (a temporary directory others cannot enter).
std::string why_nobody_cannot_run_the_suite();

// Starts the baseline on `images` images (4000 take about 15 s) with its report in a fresh folder, sends
// `sig` after `after_ms`, and returns how it ended, its stderr, and the files it left beside that.
struct Interrupted {
  int status;  // as from waitpid
  std::string err;
  std::vector<std::string> left;
};
Interrupted interrupt_suite(int sig, int after_ms, const std::string& images, bool ignore_sigint = false);

// A fresh, empty temporary folder for one test, removed by the destructor.
struct TempDir {
  TempDir();
  ~TempDir();
  std::filesystem::path path;
  std::filesystem::path operator/(const std::string& name) const { return path / name; }
};

void write_bytes(const std::filesystem::path& file, const std::string& bytes);
// The arguments of a quiet baseline run of `images` images whose report goes to `report`.
inline std::vector<std::string> baseline_run(int images, const std::filesystem::path& report) {
  return {"--backend", kBaseline, "--images", std::to_string(images), "--quiet", "--output", report.string()};
}

// Unsets the named environment variables for the life of the object, then gives them back their values.
class WithoutEnvironment {
 public:
  explicit WithoutEnvironment(std::vector<std::string> names);
  ~WithoutEnvironment();
  WithoutEnvironment(const WithoutEnvironment&) = delete;
  WithoutEnvironment& operator=(const WithoutEnvironment&) = delete;

 private:
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

// Expects `err` to be one line, "suite: error: ..." containing `fragment`.
void expect_one_error_line(const std::string& err, const std::string& fragment);

std::string slurp(const std::filesystem::path& file);  // the whole file ("" when it cannot be read)
nlohmann::json read_json(const std::filesystem::path& file);  // a report; throws when it is not JSON

// A run record of 1000 images on 2 threads, passes of 40, 10 and 20 ms: a median of 20 ms, 50000 images/s, whose
// derived numbers the report and table tests know.
RunRecord a_timed_run();

}  // namespace cnn::test
