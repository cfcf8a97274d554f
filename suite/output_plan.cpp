#include "suite/output_plan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <string>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "suite/atomic_file.hpp"
#include "suite/startup.hpp"
#include "suite/system_info.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void output_error(const fs::path& p, const std::string& what) {
  throw SuiteError(kExitOther, display(p) + ": " + what);
}

std::optional<struct stat> stat_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return st;
}

bool is_link(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

const char* kind_of(mode_t mode) {
  return S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket" : S_ISBLK(mode) ? "a block device" : "not a regular file";
}

// A removed working directory can still be stat()ed and even be the process' cwd, but nothing can be
// created in it; getcwd() tells it apart with ENOENT.
bool working_directory_deleted() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof buf) == nullptr && errno == ENOENT;
}

// The nearest existing ancestor of a folder the suite will create (results/local/ of the default name).
void check_creatable(const fs::path& report, const fs::path& dir) {
  fs::path existing = dir;
  while (!stat_of(existing) && existing.has_parent_path() && existing != existing.parent_path()) {
    // A dangling link there: create_directories would fail with EEXIST after the whole run.
    if (is_link(existing))
      output_error(report, "cannot create directory '" + display(dir) + "' ('" + display(existing) + "' is a dangling symbolic link)");
    existing = existing.parent_path();
  }
  if (!stat_of(existing)) existing = ".";
  const auto st = stat_of(existing);
  if (!st || !S_ISDIR(st->st_mode)) {
    output_error(report, "cannot create directory '" + display(dir) + "' ('" + display(existing) + "' is not a directory)");
  }
  if (const int err = probe_temporary_in(existing)) {
    output_error(report, "cannot create directory '" + display(dir) + "' (" + std::strerror(err) + ")");
  }
}

using Stated = std::vector<std::pair<fs::path, struct stat>>;  // paths that exist, with their stat()

// One output: not an input, nor an existing file in an input folder, not a FIFO, a name that fits, a directory
// that takes the temporary file.
void check_output(const char* flag, const fs::path& p, bool create_directory, const Stated& inputs,
                  const Stated& input_folders) {
  if (is_standard_output(p)) {
    if (stdout_closed_at_start()) output_error(p, "standard output is closed (started with >&-)");
    return;
  }
  if (p.is_relative() && working_directory_deleted()) {
    output_error(p, (create_directory ? "cannot create directory '" + display(directory_of(p)) + "': " : std::string()) +
                        "the working directory no longer exists (it was deleted)");
  }
  // The report replaces the link, not what it points to (--output /dev/stderr replaced that link with a file).
  if (is_link(p)) output_error(p, "is a symbolic link: name the file itself (the link would be replaced, not written through)");
  const fs::path dir = directory_of(p);
  const auto dst = stat_of(dir);
  const std::string name = p.filename().native();
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name.size() > std::size_t(name_max > 0 ? name_max : NAME_MAX)) {
    output_error(p, "file name too long (" + std::to_string(name.size()) + " bytes, at most " +
                        std::to_string(name_max > 0 ? name_max : NAME_MAX) + ")");
  }
  if (const auto st = stat_of(p)) {
    for (const auto& [input, ist] : inputs) {
      if (same_file(*st, ist)) {
        throw UsageError(std::string(flag) + " '" + display(p) + "' is the input file '" + display(input) +
                         "': refusing to overwrite it");
      }
    }
    if (S_ISDIR(st->st_mode)) output_error(p, "is a directory");
    if (S_ISCHR(st->st_mode)) return;  // /dev/null, /dev/full: written in place
    if (!S_ISREG(st->st_mode)) output_error(p, std::string("is ") + kind_of(st->st_mode) + ", not a regular file");
    if (dst) {
      for (const auto& [folder, fst] : input_folders) {
        if (same_file(*dst, fst)) {
          throw UsageError(std::string(flag) + " '" + display(p) + "' is a file in the input folder '" + display(folder) +
                           "': refusing to overwrite it (name a new file, or another folder)");
        }
      }
    }
    // An immutable or append-only file (or a read-only mount) cannot be replaced: find out now, not after the run.
    const int fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    else if (errno == EPERM || errno == EROFS || errno == ETXTBSY) output_error(p, std::string("cannot be replaced (") + std::strerror(errno) + ")");
    // Another user's file in a sticky folder (/tmp) can be opened but not renamed over.
    const uid_t me = ::geteuid();
    if (dst && (dst->st_mode & S_ISVTX) && me != 0 && st->st_uid != me && dst->st_uid != me)
      output_error(p, "cannot be replaced (another user's file in a sticky folder such as /tmp)");
  }
  if (!dst && create_directory) return check_creatable(p, dir);
  if (!dst) output_error(p, "directory '" + display(dir) + "' does not exist");
  if (!S_ISDIR(dst->st_mode)) output_error(p, "'" + display(dir) + "' is not a directory");
  if (const int err = probe_temporary_in(dir)) {
    output_error(p, "directory '" + display(dir) + "' is not writable (" + std::strerror(err) + ")");
  }
}

}  // namespace

fs::path default_report_path() {
  std::string stamp = utc_now_iso8601();
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return fs::path("results") / "local" / ("suite-" + stamp + ".json");
}

OutputPlan plan_outputs(const Options& opt, const InputPaths& input_paths) {
  const auto stated = [](const std::vector<fs::path>& paths) {
    Stated out;
    for (const fs::path& f : paths)
      if (const auto st = stat_of(f)) out.emplace_back(f, *st);
    return out;
  };
  const Stated inputs = stated(input_paths.files), folders = stated(input_paths.folders);

  OutputPlan plan;
  plan.report_name_chosen = opt.output.empty();
  plan.report = plan.report_name_chosen ? default_report_path() : fs::path(opt.output);
  plan.probs = opt.save_probs;
  check_output("--output", plan.report, plan.report_name_chosen, inputs, folders);
  // The report on standard output alone: --format json prints that report (once), a table or CSV would be mixed in.
  if (is_standard_output(plan.report) && !(opt.format == Format::json || (opt.format == Format::table && opt.quiet))) {
    throw UsageError("--output '" + display(plan.report) + "': the report on standard output needs --format json or "
                     "--quiet (other output would be mixed with it)");
  }
  if (plan.probs.empty()) return plan;
  check_output("--save-probs", plan.probs, false, inputs, folders);
  // The .npy's bytes on standard output only where nothing else goes there.
  if (is_standard_output(plan.probs) &&
      (is_standard_output(plan.report) || opt.format != Format::table || !opt.quiet)) {
    throw UsageError("--save-probs '" + display(plan.probs) + "': standard output takes the .npy only with --quiet, "
                     "--format table and the report in a file (it would be mixed with other output)");
  }

  // The .npy must not replace the report: the same file by inode where both exist, by path otherwise.
  const auto a = stat_of(plan.report), b = stat_of(plan.probs);
  std::error_code ec1, ec2;
  const bool same = (a && b) ? same_file(*a, *b)
                             : fs::weakly_canonical(fs::absolute(plan.report), ec1) ==
                                   fs::weakly_canonical(fs::absolute(plan.probs), ec2);
  if (same && !(a && S_ISCHR(a->st_mode))) {
    throw UsageError("--save-probs '" + display(plan.probs) + "' and --output '" + display(plan.report) +
                     "' are the same file");
  }
  return plan;
}

}  // namespace cnn
