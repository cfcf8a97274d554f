"""matplotlib as every chart of these tools draws with it: the Agg backend (no display needed), and names drawn as
the text they are. Names come from reports, i.e. from anyone: `$\\foo$` in a variant was read as mathtext, and an
unknown command was a traceback."""

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.pyplot as plt  # noqa: E402,F401  (handed on: `from .matplotlib_setup import plt`)
