"""Runs a tool of scripts/ (report, plot, compare, history, make-results-readme) in this process, as
the script would (cli.start(prog, "X_main")), instead of starting it as a program: each program
re-imports matplotlib and numpy, which made these tests take about a minute.

run_tool(tool, *args, cwd=None) returns what subprocess.run(..., capture_output=True, text=True)
would: returncode, stdout and stderr as str. What a tool changes in the process is put back
afterwards: the working folder, sys.argv, the environment, the warning filters, the colour palette,
the figures it left open. The scripts themselves are run as programs by
test_tools.py::test_scripts_are_executable_and_use_debians_python; tests that need a process of
their own (concurrent `history add`) start one.
"""

import contextlib
import importlib
import io
import os
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from suitereport import cli  # noqa: E402

# tool script -> (prog that cli.run names in its errors, module with main(argv)), as the scripts say
TOOLS = {
    "report": ("report", "report_main"),
    "plot": ("plot", "plot_main"),
    "compare": ("compare", "compare_main"),
    "history": ("history", "history_main"),
    "make-results-readme": ("make-results-readme", "readme_main"),
}

# The warning filters of a plain `python3` (no -W, no PYTHONWARNINGS): what the scripts run with.
_IGNORED_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


class _Capture(io.StringIO):
    """A captured stream that survives close(): cli.run closes sys.stderr on a broken pipe."""

    def close(self):
        pass


def _exit_code(e, err):
    """The exit status of a program ended by SystemExit e, as the interpreter sets it."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=err)  # sys.exit("message"): the message on stderr, status 1
    return 1


def run_tool(tool, *args, cwd=None):
    """`scripts/<tool> args...`, run in this process: a subprocess.CompletedProcess (text)."""
    prog, module_name = TOOLS[tool]
    importlib.import_module(f"suitereport.{module_name}")  # before the capture, as the tests always did
    argv = [str(a) for a in args]
    out, err = _Capture(), _Capture()
    saved_cwd, saved_argv, saved_env = os.getcwd(), sys.argv, dict(os.environ)
    palette = sys.modules.get("suitereport.palette")
    saved_styles = dict(palette._styles) if palette else {}
    plt = sys.modules.get("matplotlib.pyplot")
    figures_before = set(plt.get_fignums()) if plt else set()
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = [str(SCRIPTS / tool), *argv]
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            warnings.resetwarnings()
            for category in _IGNORED_BY_DEFAULT:
                warnings.simplefilter("ignore", category)
            # on stderr, as the interpreter writes them (not to pytest's warning log)
            warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: \
                err.write(warnings.formatwarning(message, category, filename, lineno, line))
            try:
                code = cli.start(prog, module_name, argv)
            except SystemExit as e:
                code = _exit_code(e, err)
            except Exception:  # the program would die with a traceback and status 1
                traceback.print_exc(file=err)
                code = 1
            else:
                code = 0 if code is None else code
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        if dict(os.environ) != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)
        palette = sys.modules.get("suitereport.palette")
        if palette:
            palette._styles.clear()
            palette._styles.update(saved_styles)
        plt = sys.modules.get("matplotlib.pyplot")
        if plt:
            for num in set(plt.get_fignums()) - figures_before:
                plt.close(num)
    return subprocess.CompletedProcess([str(SCRIPTS / tool), *argv], code, out.getvalue(), err.getvalue())
