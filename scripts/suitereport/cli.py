"""What every tool's main() shares: one clear line on stderr and exit code 2 for bad input."""

import argparse
import importlib
import sys

from .load import ReportError
from . import safe_io
from .safe_io import UnsafePath

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`prog: error: ...`), exit 2."""

    def error(self, message):
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def report_parser(prog, description):
    """The parser of a tool over a set of reports: its positional REPORT|FOLDER arguments. `description` may
    say {baseline}, the manifests' baseline variant."""
    from . import manifests
    parser = Parser(prog=prog, description=description.format(baseline=":".join(manifests.baseline())))
    parser.add_argument("paths", nargs="*", metavar="REPORT|FOLDER",
                        help="report files or folders, searched recursively (default: results/, without "
                             "results/local/)")
    return parser


def add_step_options(parser, threshold_help):
    """--threshold and --alpha: when a change of a benchmark's median counts (gate.decide)."""
    from .gate import DEFAULT_ALPHA
    parser.add_argument("--threshold", default="10%", metavar="PCT", help=threshold_help)
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, metavar="P",
                        help="significance level of the one-sided Mann-Whitney U test (default: %(default)s)")


def start(prog, module, argv=None):
    """A tool script's entry: suitereport.<module>'s main() run by run(), imported there too, so that a Python
    package this machine lacks (the GPU machine has no matplotlib) is one line, whether a tool needs it
    always (numpy for the statistics of compare and history) or only for charts."""
    return run(prog, lambda args: importlib.import_module(f"{__package__}.{module}").main(args), argv)


def run(prog, main, argv=None):
    safe_io.forget_inputs()  # this command's inputs only (the tests run several in one process)
    try:
        return main(sys.argv[1:] if argv is None else argv)
    except (ReportError, UnsafePath) as e:  # UnsafePath: a path safe_io refused to read or could not write
        print(f"{prog}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ModuleNotFoundError as e:
        package = (e.name or "").partition(".")[0]
        if package in ("", __package__):
            raise  # a module of these tools missing is a defect, not this machine's
        print(f"{prog}: error: needs the Python package {package}, which is not installed here (Debian: "
              f"python3-{package}; scripts/deps/reports.txt lists what the report tools need)", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `scripts/report | head`
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def _one_line(e):
    """The message on one line: a file or host name with a newline must not split it."""
    return " ".join(str(e).splitlines())
