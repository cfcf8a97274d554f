#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <elf.h>
#include <fcntl.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>

#include "common/registry.hpp"
#include "suite/build_info.hpp"
#include "suite/reference.hpp"

namespace cnn::test {
namespace fs = std::filesystem;

fs::path data_dir() { return build_info::data_dir(); }

bool backend_built(const std::string& name) {
  for (const auto& e : all_backends())
    if (e.name == name) return bool(e.make);
  return false;
}

std::vector<std::string> backend_folders() {
  std::vector<std::string> out;
  for (const auto& dir : fs::directory_iterator(fs::path(SUITE_SOURCE_DIR) / "backends"))
    if (dir.is_directory()) out.push_back(dir.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json backend_manifest(const std::string& name) {
  const fs::path path = fs::path(SUITE_SOURCE_DIR) / "backends" / name / "manifest.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path.string() + ": cannot read");
  return nlohmann::json::parse(in);
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

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

CliResult run_suite(const std::vector<std::string>& args) { return run_suite(args, Launch{}); }

Launch within_small_address_space() {
  Launch how;
  how.address_space_limit = 256L << 20;
  how.env = {"OMP_NUM_THREADS=2"};
  return how;
}

namespace {

// In a forked child: says on its stderr why it cannot go on, then exits with `code`. strerrordesc_np, not
// strerror: no locale lookup (and no allocation) in the child of a multi-threaded process.
[[noreturn]] void child_fails(int code, const char* what, const char* path) {
  const char* why = ::strerrordesc_np(errno);
  for (const char* part : {"suite test launcher: ", what, " '", path, "': ", why ? why : "unknown error", "\n"})
    (void)!::write(STDERR_FILENO, part, std::strlen(part));
  ::_exit(code);
}

// In a forked child: sets a resource limit from Launch (-1: leaves the inherited one).
void limit_child(int resource, long bytes, const char* what, const char* binary) {
  if (bytes < 0) return;
  const struct rlimit limit = {rlim_t(bytes), rlim_t(bytes)};
  if (::setrlimit(resource, &limit) != 0) child_fails(124, what, binary);
}

// The build tree's shared libraries that `binary` loads (an offload backend's library), as ldd lists them.
std::vector<std::pair<std::string, fs::path>> build_tree_libraries(const fs::path& binary) {
  const std::string tree = fs::path(SUITE_BINARY).parent_path().parent_path().string() + "/";
  std::vector<std::pair<std::string, fs::path>> libs;
  FILE* ldd = ::popen(("ldd '" + binary.string() + "' 2>/dev/null").c_str(), "r");
  if (!ldd) return libs;
  char line[4096];
  while (std::fgets(line, sizeof line, ldd)) {
    std::istringstream words(line);
    std::string name, arrow, path;
    if (words >> name >> arrow >> path && arrow == "=>" && path.rfind(tree, 0) == 0) libs.emplace_back(name, path);
  }
  ::pclose(ldd);
  return libs;
}

// The folder under the temporary directory that `nobody` can enter, or why there is none.
std::string unreachable_for_others(const fs::path& dir) {
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return p.string() + ": " + std::strerror(errno);
    if (!(st.st_mode & S_IXOTH)) return p.string() + " cannot be entered by other users (mode " + std::to_string(st.st_mode & 07777) + ")";
    if (p == p.parent_path()) break;
  }
  return {};
}

// A copy of the suite where `nobody` can run it, removed with the object: the build tree may sit in a
// folder only its owner can enter (a clone inside a 0700 directory), where exec fails with EACCES.
struct NobodysSuite {
  fs::path dir;
  fs::path binary;
  NobodysSuite() {
    std::string tmpl = (fs::temp_directory_path() / "suite-nobody-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    dir = tmpl;
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    binary = copy_suite_binary(dir);
  }
  ~NobodysSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

fs::path copy_suite_binary(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path binary = dir / "suite";
  fs::copy_file(SUITE_BINARY, binary, fs::copy_options::overwrite_existing);
  for (const auto& [name, path] : build_tree_libraries(SUITE_BINARY))
    fs::copy_file(path, dir / name, fs::copy_options::overwrite_existing);
  return binary;
}

std::string why_nobody_cannot_run_the_suite() {
  if (::getuid() != 0) return {};  // as_nobody is then this user, who can reach the build tree
  return unreachable_for_others(fs::temp_directory_path());
}

CliResult run_suite(const std::vector<std::string>& args, const Launch& how) {
  TempDir io;
  const fs::path out = how.stdout_path.empty() ? io / "stdout" : fs::path(how.stdout_path), err = io / "stderr";
  const bool drop_root = how.as_nobody && ::getuid() == 0;
  std::optional<NobodysSuite> staged;
  if (drop_root) staged.emplace();
  const fs::path binary = staged ? staged->binary : how.binary.empty() ? fs::path(SUITE_BINARY) : how.binary;
  std::vector<std::string> env = how.env;
  if (staged) env.push_back("LD_LIBRARY_PATH=" + staged->dir.string());  // RUNPATH names the build tree
  if (how.as_nobody) fs::permissions(io.path, fs::perms::all, fs::perm_options::add);
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int terminal = -1, terminal_side = -1;
  if (how.stderr_on_terminal && ::openpty(&terminal, &terminal_side, nullptr, nullptr, nullptr) != 0)
    throw std::runtime_error(std::string("openpty: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid == 0) {
    const bool stdout_to_file = !how.close_stdout && !how.stdout_pipe_closed;
    const int o = stdout_to_file ? ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    const int e = how.stderr_on_terminal ? terminal_side : ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(e, 2);  // first: what the launcher fails on below is said there
    ::dup2(in, 0);
    if (how.close_stdout) {
      ::close(1);
    } else if (how.stdout_pipe_closed) {
      int pipe_ends[2];
      if (::pipe(pipe_ends) != 0) child_fails(125, "cannot make a pipe for", binary.c_str());
      ::close(pipe_ends[0]);  // every write to stdout fails with EPIPE, or SIGPIPE's default action, as in a shell
      ::dup2(pipe_ends[1], 1);
      ::signal(SIGPIPE, SIG_DFL);
    } else {
      ::dup2(o, 1);
    }
    if (!how.cwd.empty() && ::chdir(how.cwd.c_str()) != 0) child_fails(126, "cannot enter", how.cwd.c_str());
    if (how.delete_cwd && ::rmdir(how.cwd.c_str()) != 0) child_fails(126, "cannot remove", how.cwd.c_str());
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    if (how.ignore_sigint) ::signal(SIGINT, SIG_IGN);
    limit_child(RLIMIT_FSIZE, how.file_size_limit, "cannot set RLIMIT_FSIZE for", binary.c_str());
    limit_child(RLIMIT_AS, how.address_space_limit, "cannot set RLIMIT_AS for", binary.c_str());
    limit_child(RLIMIT_NPROC, how.process_limit, "cannot set RLIMIT_NPROC for", binary.c_str());
    limit_child(RLIMIT_STACK, how.stack_limit, "cannot set RLIMIT_STACK for", binary.c_str());
    if (drop_root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) child_fails(125, "cannot become nobody to run", binary.c_str());
    ::execv(binary.c_str(), argv.data());
    child_fails(127, "cannot execute", binary.c_str());
  }
  std::string shown;  // what the terminal showed, read as it comes (a full terminal would stop the child)
  if (how.stderr_on_terminal) {
    ::close(terminal_side);
    char buf[4096];
    for (ssize_t n; (n = ::read(terminal, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
      if (n > 0) shown.append(buf, std::size_t(n));
    ::close(terminal);  // read() fails with EIO once the child's side is closed
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, how.stdout_path.empty() && !how.close_stdout ? slurp(out) : std::string(),
          how.stderr_on_terminal ? shown : slurp(err)};
}

Interrupted interrupt_suite(int sig, int after_ms, const std::string& images, bool ignore_sigint) {
  TempDir dir;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(err, 2);
    // Set either way: a background job of a non-interactive shell starts with SIGINT ignored, and the suite
    // keeps a disposition it inherits as ignored.
    ::signal(SIGINT, ignore_sigint ? SIG_IGN : SIG_DFL);
    ::execl(SUITE_BINARY, SUITE_BINARY, "--backend", kBaseline.c_str(), "--images", images.c_str(), "--repeat", "1",
            "--warmup", "0", "--output", (dir / "r.json").c_str(), static_cast<char*>(nullptr));
    child_fails(127, "cannot execute", SUITE_BINARY);
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

namespace {

// A T at `offset` of an ELF file's bytes; throws when the file is too short for it.
template <typename T>
T elf_read(const std::string& bytes, std::uint64_t offset, const fs::path& file) {
  T value;
  if (offset > bytes.size() || bytes.size() - offset < sizeof value)
    throw std::runtime_error(file.string() + ": truncated ELF file");
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace

std::vector<std::string> needed_libraries(const fs::path& elf) {
  const std::string bytes = slurp(elf);
  const auto header = elf_read<Elf64_Ehdr>(bytes, 0, elf);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(elf.string() + ": not a 64-bit ELF file");
  auto section = [&](std::uint64_t i) {
    return elf_read<Elf64_Shdr>(bytes, header.e_shoff + i * header.e_shentsize, elf);
  };
  std::vector<std::string> needed;
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr dynamic = section(i);
    if (dynamic.sh_type != SHT_DYNAMIC) continue;
    const Elf64_Shdr strings = section(dynamic.sh_link);
    for (std::uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dynamic.sh_size; at += sizeof(Elf64_Dyn)) {
      const auto entry = elf_read<Elf64_Dyn>(bytes, dynamic.sh_offset + at, elf);
      if (entry.d_tag != DT_NEEDED) continue;
      const std::uint64_t name = strings.sh_offset + entry.d_un.d_val;
      const std::size_t end = name < bytes.size() ? bytes.find('\0', name) : std::string::npos;
      if (end == std::string::npos) throw std::runtime_error(elf.string() + ": truncated ELF file");
      needed.push_back(bytes.substr(name, end - name));
    }
  }
  return needed;
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

RunRecord a_timed_run() {
  RunRecord r;
  r.backend = "model";
  r.variant = "step";
  r.images = 1000;
  r.threads = 2;
  r.forward_samples_ms = {40.0, 10.0, 20.0};
  return r;
}

WithoutEnvironment::WithoutEnvironment(std::vector<std::string> names) : names_(std::move(names)) {
  for (const std::string& n : names_) {
    if (const char* v = std::getenv(n.c_str())) saved_.emplace_back(n, v);
    ::unsetenv(n.c_str());
  }
}

WithoutEnvironment::~WithoutEnvironment() {
  for (const std::string& n : names_) ::unsetenv(n.c_str());
  for (const auto& [n, v] : saved_) ::setenv(n.c_str(), v.c_str(), 1);
}

void expect_one_error_line(const std::string& err, const std::string& fragment) {
  EXPECT_EQ(err.rfind("suite: error: ", 0), 0u) << err;
  EXPECT_NE(err.find(fragment), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace cnn::test
