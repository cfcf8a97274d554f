#include "tests/test_support.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "common/build_info.hpp"
#include "common/reference.hpp"

namespace cnn::test {
namespace fs = std::filesystem;

fs::path data_dir() { return build_info::data_dir(); }

std::vector<std::string> backend_folders() {
  std::vector<std::string> out;
  for (const auto& dir : fs::directory_iterator(fs::path(SUITE_SOURCE_DIR) / "backends")) {
    std::ifstream in(dir.path() / "CMakeLists.txt");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // suite_gcc_offload_backend() (cmake/SuiteGccOffload.cmake) adds or skips openacc and omptarget.
    for (const char* call : {"suite_add_backend(", "suite_skip_backend(", "suite_gcc_offload_backend("})
      if (text.find(call) != std::string::npos) {
        out.push_back(dir.path().filename().string());
        break;
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Dataset& training_images() {
  static const Dataset d = load_cifar10({data_dir() / "cifar10"});
  return d;
}

const Network& trained_network() {
  static const Network n = load_network(data_dir() / "convnetjs-cifar10");
  return n;
}

const std::vector<double>& reference_first(std::size_t n) {
  static std::map<std::size_t, std::vector<double>> cache;
  static std::mutex m;
  std::lock_guard lock(m);
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, reference_probs(trained_network(), training_images(), n)).first;
  return it->second;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliResult run_suite(const std::vector<std::string>& args) { return run_suite(args, Launch{}); }

CliResult run_suite(const std::vector<std::string>& args, const Launch& how) {
  TempDir io;
  const fs::path out = how.stdout_path.empty() ? io / "stdout" : fs::path(how.stdout_path), err = io / "stderr";
  if (how.as_nobody) fs::permissions(io.path, fs::perms::all, fs::perm_options::add);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(in, 0);
    if (!how.cwd.empty() && ::chdir(how.cwd.c_str()) != 0) ::_exit(126);
    for (const std::string& kv : how.env) ::putenv(const_cast<char*>(kv.c_str()));
    if (how.ignore_sigint) ::signal(SIGINT, SIG_IGN);
    if (how.file_size_limit >= 0) {
      const struct rlimit limit = {rlim_t(how.file_size_limit), rlim_t(how.file_size_limit)};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(124);
    }
    if (how.as_nobody && ::getuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(125);
    std::vector<char*> argv{const_cast<char*>(SUITE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(SUITE_BINARY, argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, how.stdout_path.empty() ? slurp(out) : std::string(), slurp(err)};
}

Interrupted interrupt_suite(int sig, int after_ms, const std::string& images, bool ignore_sigint) {
  TempDir dir;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(err, 2);
    if (ignore_sigint) ::signal(SIGINT, SIG_IGN);
    ::execl(SUITE_BINARY, SUITE_BINARY, "--backend", "serial:naive", "--images", images.c_str(), "--repeat", "1",
            "--warmup", "0", "--output", (dir / "r.json").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::usleep(after_ms * 1000);
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Interrupted out{status, slurp(dir / "stderr"), {}};
  for (const auto& e : fs::directory_iterator(dir.path))
    if (e.path().filename() != "stderr") out.left.push_back(e.path().filename().string());
  return out;
}

TempDir::TempDir() {
  static std::mt19937_64 rng(std::random_device{}());
  path = fs::temp_directory_path() / ("suite-test-" + std::to_string(::getpid()) + "-" + std::to_string(rng()));
  fs::create_directories(path);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path, ec);
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

}  // namespace cnn::test
