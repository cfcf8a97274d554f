#include "suite/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "common/errors.hpp"
#include "suite/atomic_file.hpp"

namespace cnn {
namespace {

struct Terminating {
  int number;
  const char* what;  // completes "suite: error: ..."
};
constexpr Terminating kTerminating[] = {
    {SIGINT, "interrupted by SIGINT"},  {SIGTERM, "terminated by SIGTERM"}, {SIGHUP, "terminated by SIGHUP"},
    {SIGUSR1, "terminated by SIGUSR1"}, {SIGUSR2, "terminated by SIGUSR2"}, {SIGALRM, "terminated by SIGALRM"},
    {SIGXCPU, "stopped by SIGXCPU (the CPU time limit, ulimit -t)"},
};

char g_report[4096];  // the report written so far, for the handler's message
std::atomic<bool> g_report_written{false};
std::atomic<bool> g_npy_pending{false};
bool g_stderr_is_terminal = false;  // a progress line may be open there: the message starts on a line of its own
std::atomic<int> g_outcome{-1};  // the decided exit code (note_outcome), -1 while the run goes on
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");

void say(const char* s) { (void)!::write(STDERR_FILENO, s, std::strlen(s)); }

extern "C" void on_signal(int sig) {
  if (const int decided = g_outcome.load(); decided >= 0) ::_exit(decided);
  remove_pending_temporaries();
  say(g_stderr_is_terminal ? "\nsuite: error: " : "suite: error: ");
  for (const Terminating& t : kTerminating)
    if (t.number == sig) say(t.what);
  if (g_report_written) {
    say(", the report was written to ");
    say(g_report);
    say(g_npy_pending ? " (the .npy was not)\n" : "\n");
  } else {
    say(", no report written\n");
  }
  ::_exit(kExitInterrupted + sig);
}

}  // namespace

void install_signal_handlers() {
  // A run starts with nothing written and nothing decided, also the second run of one process (the tests').
  g_outcome = -1;
  g_report_written = false;
  g_npy_pending = false;
  g_stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;
  for (const Terminating& t : kTerminating) {
    struct sigaction old {};
    sigaction(t.number, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // ignored by whoever started us: keep it so
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);  // one handler at a time
    sigaction(t.number, &sa, nullptr);
  }
  std::signal(SIGPIPE, SIG_IGN);
  // A write past the file-size limit (`ulimit -f`) then fails with EFBIG, which the writers report
  // ("cannot write: File too large") after removing their temporary file; the default action would kill
  // the process silently and leave the partial temporary file behind.
  std::signal(SIGXFSZ, SIG_IGN);
}

void note_outcome(int exit_code) { g_outcome = exit_code < 0 ? 1 : exit_code; }

void note_npy_written() { g_npy_pending = false; }

void note_report_written(const std::filesystem::path& path, bool npy_follows) {
  g_npy_pending = npy_follows;
  const std::string& s = path.native();
  const std::size_t n = std::min(s.size(), sizeof g_report - 1);
  std::memcpy(g_report, s.data(), n);
  g_report[n] = '\0';
  g_report_written = true;
}

}  // namespace cnn
