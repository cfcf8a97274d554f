"""The shell scripts of scripts/ run as programs, as their tests need them: bash, text output, a time limit."""

import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]


def run_script(name, *args, timeout=60, **kwargs):
    """`bash scripts/<name> args...`: a subprocess.CompletedProcess (text)."""
    return subprocess.run(["bash", str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def assert_usage_refused(done, prog):
    """Exit 2 and one line, `<prog>: usage: ...`, as for every missing argument."""
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"{prog}: usage: "), done.stderr
