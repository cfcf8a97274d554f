"""One colour per backend:variant in every chart (bar, line, history, cascade), one marker per backend.

Each backend gets a hue (grey, blue, orange, green, purple, red, pink, ...: tab10's well-separated
hues) in the order the reports list the backends; its variants get shades of that hue, dark to light.
The tools call register() once with every run they loaded, so a name has the same colour in all
charts drawn from the same reports.
"""

import re

from matplotlib.colors import to_hex, to_rgb

from . import manifests

FAMILIES = ("#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#e377c2", "#8c564b", "#bcbd22",
            "#17becf")
MARKERS = ("s", "o", "D", "v", "^", "P", "X", "<", ">", "*")
MACHINE_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")

_styles = {}


def register(runs):
    """Assigns the colours of every backend:variant of runs (load.Run), backends in report order."""
    from .analysis import backend_ranks
    ranks = backend_ranks(runs)
    variants = {}
    for r in runs:
        names = variants.setdefault(r.backend, [])
        if r.variant not in names:
            names.append(r.variant)
    _styles.clear()
    for i, backend in enumerate(sorted(variants, key=lambda b: (ranks.get(b, len(ranks)), b))):
        _assign(backend, variants[backend], i)


# The suite's own backend order (the manifests' "order"), the peer last: the history's colours follow it,
# so a store gives every backend:variant the same colour on the dashboard and in the PNG charts.
SUITE_ORDER = manifests.suite_order()


def register_series(series_list):
    """Colours for the history's series (history.Series): backends in SUITE_ORDER (others after, by
    name), each backend's variants by name; the same store, the same colours in every view."""
    variants = {}
    for s in series_list:
        variants.setdefault(s.backend, set()).add(s.variant)
    _styles.clear()
    rank = {b: i for i, b in enumerate(SUITE_ORDER)}
    for i, backend in enumerate(sorted(variants, key=lambda b: (rank.get(b, len(rank)), b))):
        _assign(backend, sorted(variants[backend]), i)


def _assign(backend, variant_names, family_index):
    hue = to_rgb(FAMILIES[family_index % len(FAMILIES)])
    k = len(variant_names)
    for j, v in enumerate(variant_names):
        # below 0: toward black, above: toward white (at most a third, or a light shade is lost on white)
        t = 0.0 if k == 1 else -0.45 + 0.8 * j / (k - 1)
        rgb = [c * (1 + t) if t < 0 else c + (1 - c) * t for c in hue]
        _styles[f"{backend}:{v}"] = {"color": to_hex(rgb), "marker": MARKERS[family_index % len(MARKERS)]}


def style(name):
    """{'color', 'marker'} of a backend:variant; an unseen name gets a new family."""
    if name not in _styles:
        backend, _, variant = name.partition(":")
        known = [n for n in _styles if n.split(":")[0] == backend]
        families = len({n.split(":")[0] for n in _styles})
        index = families if not known else [n.split(":")[0] for n in _styles].index(backend)
        _assign(backend, [n.split(":", 1)[1] for n in known] + [variant], index)
    return _styles[name]


def color(name):
    return style(name)["color"]


def thread_linestyle(benchmark_or_threads):
    """Solid for one thread, dashed for more (the same colour: the same backend:variant)."""
    t = benchmark_or_threads
    if isinstance(t, str):
        m = re.search(r"threads:(\d+)", t)
        t = int(m.group(1)) if m else 1
    return "-" if t <= 1 else "--"


def machine_styles(machines):
    return {m: {"color": MACHINE_COLORS[i % len(MACHINE_COLORS)], "marker": "o"} for i, m in enumerate(machines)}


def backend_color(backend):
    """The colour of a backend as a whole (a model in the portability charts): its first variant's."""
    for name, st in _styles.items():
        if name.split(":")[0] == backend:
            return st["color"], st["marker"]
    st = style(f"{backend}:?")
    return st["color"], st["marker"]
