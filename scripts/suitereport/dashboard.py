"""The history dashboard: one static HTML file (inline data, JS and SVG; no network, works from file://).

Top: a summary a reader can act on. The regressions found (benchmark, platform, size, confidence, and the
commits that could have caused each: those after the last quiet measurement before the step up to the
step, with their subjects, the ones that change code the backend runs first), the improvements, the
regressions a later commit undid (folded), the latest result against the previous one per machine,
and the commits that did not build or run. Below: one chart per platform x backend x image count, its
variants as lines in their palette colours (the same as the PNG charts), hovering a point shows the
commit, its subject, the date, the median and the spread of the passes. Select boxes filter by machine
and backend (also from the URL: #machine=...&backend=<model>).

Safety: every name comes from reports and is set as text, never markup; the data is embedded as JSON
with <, >, & written as \\u003c \\u003e \\u0026 (so no string can close the script element or open a
comment that swallows it) and without NaN or Infinity, which JSON.parse refuses. The output depends
only on the store and the repository's commit order: the same inputs, the same bytes.
"""

import html
import json
import math
import shlex

from . import gate, history, palette

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%(title)s</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.2em 1.6em; color: #222; max-width: 1500px; }
h1 { margin: 0 0 0.2em; font-size: 22px; }
h2 { font-size: 17px; margin: 1.3em 0 0.4em; border-bottom: 1px solid #ddd; padding-bottom: 2px; }
p.lead { color: #444; margin: 0.2em 0 0.8em; max-width: 75em; }
table.summary { border-collapse: collapse; font-size: 13px; margin: 0.3em 0 0.6em; }
table.summary th, table.summary td { border-bottom: 1px solid #e4e4e4; padding: 3px 9px; text-align: left;
  vertical-align: top; }
table.summary th { background: #f5f5f5; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.slower, span.slower { color: #c0211f; font-weight: 600; }
td.faster, span.faster { color: #1d7a1d; font-weight: 600; }
td.machine { color: #7f7f7f; }
td.busy { color: #888; }
code, .hash { font-family: ui-monospace, monospace; font-size: 12px; }
ul.range { margin: 0; padding-left: 1.1em; }
ul.range li { margin: 0; }
ul.range li.suspect { font-weight: bold; }
ul.range li.suspect span.why { font-weight: normal; color: #555; }
.none { color: #555; font-style: italic; }
.grid { display: flex; flex-wrap: wrap; gap: 18px; }
#controls { margin: 0.6em 0 0.8em; display: flex; gap: 1.5em; align-items: center; flex-wrap: wrap;
  position: sticky; top: 0; background: #fff; padding: 6px 0; z-index: 2; }
#panels { display: flex; flex-wrap: wrap; gap: 14px; }
.panel { border: 1px solid #ddd; border-radius: 5px; padding: 6px 8px; width: 460px; }
.panel h3 { font-size: 13px; margin: 0 0 2px; font-weight: 600; }
.panel .machine { color: #666; font-weight: normal; }
.legend { font-size: 11px; display: flex; flex-wrap: wrap; gap: 2px 12px; margin: 2px 0 0; }
.legend .sw { display: inline-block; width: 18px; height: 0; border-top: 3px solid; vertical-align: middle;
  margin-right: 4px; }
.legend .sw.dashed { border-top-style: dashed; }
svg.chart { display: block; }
svg.chart text { font-size: 10px; fill: #444; }
circle.point { cursor: pointer; }
circle.busy { fill: #fff; }
circle.step-slower { stroke: #d62728; stroke-width: 3; }
circle.step-faster { stroke: #2ca02c; stroke-width: 3; }
circle.step-machine { stroke: #7f7f7f; stroke-width: 3; stroke-dasharray: 2 2; }
#tip { position: fixed; pointer-events: none; background: #222; color: #fff; padding: 5px 8px;
  border-radius: 3px; font-size: 12px; display: none; white-space: pre; max-width: 60em; z-index: 5; }
#count { color: #666; }
details summary { cursor: pointer; color: #333; }
</style>
</head>
<body>
<h1>%(title)s</h1>
<p class="lead">Forward time per pass (median of the timed passes, ms; lower is faster) of each benchmark over
commits in git order, from <code>%(store)s</code>. A <b>step</b> is a change beyond %(threshold)s that a
one-sided Mann-Whitney U test on the passes finds significant (p &lt; %(alpha)s) against the last earlier quiet
measurement of the same benchmark on the same machine, built the same way (compiler, flags and runtime: a
benchmark built two ways is two lines, its build in brackets). Its <b>evidence</b>: "one boot" where both commits ran in
one boot of the machine (the reports' <code>boot_id</code>), like for like: that boot's passes decide, and a step
they do not show is the machine's ("gone in one boot"). Across boots (a fresh VM, another GPU
machine) the same code may run 1.5x apart, so the benchmarks on that machine whose code no commit in between
changes, measured at the same two commits, are its controls: "beyond controls" where they moved less, and where
they moved as much the step is the machine's (listed below, not a regression); with fewer than %(min_controls)s
controls the step is "unconfirmed" until both commits are rerun in one boot. Measurements made while the
machine was busy are drawn hollow and %(busy_rule)s; the PyTorch peer is drawn, never judged. Generated by <code>scripts/history html</code>.</p>
<div id="summary">
<h2>Regressions</h2><div id="regressions"></div>
<h2>Improvements</h2><div id="improvements"></div>
<details id="undone-box"><summary><b>Regressions a later commit undid</b> (<span id="undone-count"></span>,
no slower today)</summary>
<p class="lead">Slower steps after which every later measurement of the benchmark is back within the threshold
of the step's base: what was slower once, from the commit named in the evidence on.</p>
<div id="undone"></div></details>
<details id="candidates-box"><summary><b>Steps seen only on a busy machine</b> (<span id="candidate-count"></span>
candidates, not verdicts)</summary>
<p class="lead">These appear only when measurements made under load count, and the next measurement kept the
change. Under load most are the machine, not the code: confirm one with a quiet rerun of both commits or
<code>scripts/history bisect BENCHMARK GOOD BAD</code>.</p>
<div id="candidates"></div></details>
<details id="machine-box"><summary><b>Moved by the machine, not the code</b> (<span id="machine-count"></span>,
not regressions)</summary>
<p class="lead">Steps whose commit range git knows and none of whose commits changes a file the variant is built
from (its registration and what that includes, the rest of its backend's folder but other variants' own files,
the shared and common code, the harness and the build); steps across boots whose controls moved as much
(evidence "moved with controls"); and steps that both commits run again in one boot did not show ("gone in one
boot"). What moved them is the machine, its driver or toolchain:
a GPU report comes from a fresh machine each session, and a launch-bound run at few images moves by 10-25 %%
between them. Circled grey in the charts.</p>
<div id="no-code-change"></div></details>
<h2>Latest against previous, per machine</h2><div id="latest" class="grid"></div>
<div id="failures"></div>
<p id="notes" class="lead"></p>
</div>
<h2>Charts: one per machine, backend and image count</h2>
<div id="controls">
<label>machine <select id="machine"><option value="">all</option></select></label>
<label>backend <select id="backend"><option value="">all</option></select></label>
<span id="count"></span>
</div>
<div id="panels"></div>
<div id="tip"></div>
<script type="application/json" id="history-data">%(data)s</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("history-data").textContent);
const W = 450, H = 190, L = 50, R = 12, T = 10, B = 36;
const NS = "http://www.w3.org/2000/svg";
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function h(tag, attrs, text, parent) {  // names come from reports: always text, never markup
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined && text !== null) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(ms) { return ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toPrecision(3); }
function pct(x) { return (x >= 0 ? "+" : "") + (100 * x).toFixed(1) + " %%"; }
function subject(c) { return DATA.subjects[c] || ""; }
function commitCell(td, c) {  // the subject cut to one line; the whole of it on hover
  h("span", {class: "hash"}, c.slice(0, 10), td);
  const s = subject(c);
  td.appendChild(document.createTextNode(" " + (s.length > 90 ? s.slice(0, 88) + "\u2026" : s)));
  td.title = s;
}
// Whether the step's two points compare like for like (history.judge_across_boots): one boot, or what
// the benchmarks whose code did not change did meanwhile, or unconfirmed with how to confirm it.
function evidenceCell(td, s) {
  if (!s.evidence) {
    td.textContent = "\u2013";
    return;
  }
  h("b", {}, s.evidence, td);
  if (s.boot_ratio !== null)
    h("div", {}, "within that boot: " + pct(s.boot_ratio - 1) +
                 (s.boot_basis.endsWith("runs") ? " (" + s.boot_basis + ")" : "") +
                 (s.boot_family > 1 ? ", Holm over " + s.boot_family + " benchmarks" : "") +
                 (s.boot_build ? ", built " + s.boot_build : ""), td);
  if (s.drift !== null) h("div", {}, s.controls + " unchanged benchmarks: " + pct(s.drift - 1), td);
  if (s.undone) h("div", {}, "undone at " + s.undone.slice(0, 10), td);
  if (s.evidence === "unconfirmed") h("div", {}, "measured in different boots", td);
  if (s.confirm) h("code", {class: "confirm"}, s.confirm, h("div", {}, null, td));
}
function stepTable(id, rows, what, rangeHead) {
  const box = document.getElementById(id);
  if (!rows.length) {
    h("p", {class: "none"}, what, box);
    return;
  }
  const t = h("table", {class: "summary"}, null, box);
  const head = h("tr", {}, null, h("thead", {}, null, t));
  for (const c of ["benchmark", "machine", "size", "confidence", "evidence", "from (last good)",
                   rangeHead || "commits that could have caused it"])
    h("th", {}, c, head);
  const body = h("tbody", {}, null, t);
  for (const s of rows) {
    const tr = h("tr", {class: "step-row " + s.direction, "data-machine": s.machine, "data-backend": s.backend,
                        "data-benchmark": s.benchmark}, null, body);
    h("td", {}, s.benchmark, tr);
    h("td", {}, s.machine, tr);
    h("td", {class: "num " + s.direction}, pct(s.ratio - 1) + " (" + fmt(s.base_ms) + " \\u2192 " + fmt(s.ms) + " ms)", tr);
    h("td", {class: "num"}, s.confidence === null ? "medians only" : (100 * s.confidence).toFixed(2) + " %%", tr);
    evidenceCell(h("td", {class: "evidence", title: s.evidence_text}, null, tr), s);
    commitCell(h("td", {}, null, tr), s.base);
    const ul = h("ul", {class: "range"}, null, h("td", {}, null, tr));
    // The commits that change code this backend runs first, marked with where (its folder, shared
    // kernels, common code: nearest first), then the newest others (results, documents, other backends),
    // eight lines in all.
    if (s.dirty) h("li", {class: "why"}, "measured on uncommitted changes: the commits after it count too", ul);
    const suspects = s.suspects.slice(0, 8), named = s.suspects.map(x => x[0]);
    const room = 8 - suspects.length;  // slice(-0) would keep them all
    const others = room > 0 ? s.range.filter(c => !named.includes(c)).slice(-room).reverse() : [];
    for (const [c, why] of suspects) {
      const li = h("li", {class: "suspect"}, null, ul);
      commitCell(li, c);
      h("span", {class: "why"}, " (changes " + why + ")", li);
    }
    const hidden = s.range.length - suspects.length - others.length;
    for (const c of others) commitCell(h("li", {}, null, ul), c);
    if (hidden > 0) h("li", {}, "\\u2026 " + hidden + " more", ul);
  }
}
function latestGrid() {
  const box = document.getElementById("latest");
  for (const m of DATA.latest) {
    const div = h("div", {class: "latest-machine", "data-machine": m.machine}, null, box);
    h("h3", {}, m.machine, div);
    const t = h("table", {class: "summary"}, null, div);
    const head = h("tr", {}, null, h("thead", {}, null, t));
    for (const c of ["benchmark", "previous", "latest", "change"]) h("th", {}, c, head);
    const body = h("tbody", {}, null, t);
    for (const r of m.rows) {
      const tr = h("tr", {"data-backend": r.backend}, null, body);
      h("td", {}, r.benchmark, tr);
      const prev = h("td", {class: "num"}, r.prev ? fmt(r.prev_ms) + " ms @ " + r.prev.slice(0, 7) : "\\u2013", tr);
      if (r.prev) prev.title = subject(r.prev);
      h("td", {class: "num" + (r.busy ? " busy" : ""), title: subject(r.commit)},
        fmt(r.ms) + " ms @ " + r.commit.slice(0, 7) + (r.busy ? " (busy)" : ""), tr);
      h("td", {class: "num " + (r.step || "")}, r.prev ? pct(r.change) + (r.step ? " " + r.step : "") : "new", tr);
    }
  }
}
function failures() {
  if (!DATA.failures.length) return;
  const d = h("details", {}, null, document.getElementById("failures"));
  h("summary", {}, DATA.failures.length + " commit(s) without results (did not build, run or validate)", d);
  const t = h("table", {class: "summary"}, null, d);
  for (const f of DATA.failures) {
    const tr = h("tr", {class: "failure"}, null, t);
    commitCell(h("td", {}, null, tr), f.commit);
    h("td", {}, f.status, tr);
    h("td", {}, f.error, tr);
  }
}
const tip = document.getElementById("tip");
function draw(chart) {
  const panel = h("div", {class: "panel", "data-machine": chart.machine, "data-backend": chart.backend,
                          "data-key": chart.machine + " " + chart.backend + " " + chart.images}, null);
  const title = h("h3", {}, chart.backend + " at " + chart.images + " images" + (chart.peer ? " (peer)" : "") + " ", panel);
  h("span", {class: "machine"}, chart.machine, title);
  const cols = chart.commits, n = cols.length, pos = {};
  cols.forEach((c, i) => { pos[c] = i; });
  const svg = el("svg", {class: "chart", width: W, height: H, viewBox: "0 0 " + W + " " + H});
  let ymax = 0, ymin = Infinity;
  for (const s of chart.series) for (const p of s.points) { ymax = Math.max(ymax, p.ms); ymin = Math.min(ymin, p.ms); }
  // a naive variant beside a fast one: a log scale, or the fast ones lie flat on the axis
  const logScale = ymax > 20 * ymin;
  const lo = logScale ? Math.log(ymin / 1.2) : 0, hi = logScale ? Math.log(ymax * 1.2) : ymax * 1.12;
  const x = i => L + (n > 1 ? i * (W - L - R) / (n - 1) : (W - L - R) / 2);
  const y = v => T + (H - T - B) * (1 - ((logScale ? Math.log(v) : v) - lo) / (hi - lo));
  el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999"}, svg);
  el("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#999"}, svg);
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const v = logScale ? Math.exp(lo + (hi - lo) * (0.04 + 0.92 * f)) : ymax * f;
    el("line", {x1: L, y1: y(v), x2: W - R, y2: y(v), stroke: "#eee"}, svg);
    el("text", {x: L - 4, y: y(v) + 3, "text-anchor": "end"}, svg).textContent = fmt(v);
  }
  const every = Math.max(1, Math.ceil(n / 6));
  const ticks = [];
  for (let i = 0; i < n; i += every) ticks.push(i);
  if (n > 1 && ticks[ticks.length - 1] !== n - 1) {
    if (n - 1 - ticks[ticks.length - 1] < every / 2) ticks.pop();  // no two labels on top of each other
    ticks.push(n - 1);  // the newest commit is always named
  }
  for (const i of ticks) {
    const anchor = n > 1 && i === 0 ? "start" : n > 1 && i === n - 1 ? "end" : "middle";  // inside the chart
    el("text", {x: x(i), y: H - B + 12, "text-anchor": anchor}, svg).textContent = cols[i].slice(0, 7);
  }
  el("text", {x: (L + W) / 2, y: H - 4, "text-anchor": "middle"}, svg).textContent =
    "commit in git order (" + n + " with results); ms per pass" + (logScale ? ", log scale" : "");
  for (const s of chart.series) {
    const pts = s.points.map(p => x(pos[p.commit]) + "," + y(p.ms)).join(" ");
    el("polyline", {class: "line", "data-series": s.name, points: pts, fill: "none", stroke: s.color, "stroke-width": 2,
                    "stroke-dasharray": s.dashed ? "6 3" : "none"}, svg);
    for (const p of s.points) {
      const cls = "point" + (p.busy ? " busy" : "") + (p.step ? " step-" + p.step : "");
      const c = el("circle", {cx: x(pos[p.commit]), cy: y(p.ms), r: p.step ? 5.5 : 3.5, fill: p.busy ? "#fff" : s.color,
                              stroke: p.step ? "" : s.color, class: cls}, svg);
      const text = s.name + "\\ncommit " + p.commit.slice(0, 10) + "  " + subject(p.commit) + "\\n" + p.date +
        "\\n" + fmt(p.ms) + " ms (passes " + fmt(p.lo) + " \\u2013 " + fmt(p.hi) + ", " + p.n + " passes, " + p.reports + " report(s))" +
        (p.busy ? "\\nmeasured on a busy machine: not a base nor a verdict" : "") +
        (p.step ? "\\n" + p.step + " " + pct(p.change) + " against " + p.base.slice(0, 10) : "");
      el("title", {}, c).textContent = text;
      c.addEventListener("mouseenter", ev => { tip.textContent = text; tip.style.display = "block";
        tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 420) + "px"; tip.style.top = (ev.clientY + 12) + "px"; });
      c.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    }
  }
  panel.appendChild(svg);
  const legend = h("div", {class: "legend"}, null, panel);
  for (const s of chart.series) {
    const item = h("span", {}, null, legend);
    h("span", {class: "sw" + (s.dashed ? " dashed" : ""), style: "border-top-color:" + s.color}, null, item);
    item.appendChild(document.createTextNode(s.name));
  }
  return panel;
}
function applyFilter() {
  const m = document.getElementById("machine").value, b = document.getElementById("backend").value;
  let shown = 0;
  for (const p of document.querySelectorAll(".panel")) {
    const on = (!m || p.dataset.machine === m) && (!b || p.dataset.backend === b);
    p.style.display = on ? "" : "none";
    p.dataset.shown = on ? "1" : "0";
    shown += on;
  }
  for (const r of document.querySelectorAll("tr.step-row")) {
    r.style.display = (!m || r.dataset.machine === m) && (!b || r.dataset.backend === b) ? "" : "none";
  }
  for (const d of document.querySelectorAll(".latest-machine")) d.style.display = !m || d.dataset.machine === m ? "" : "none";
  for (const r of document.querySelectorAll(".latest-machine tr[data-backend]"))
    r.style.display = !b || r.dataset.backend === b ? "" : "none";
  document.getElementById("count").textContent = shown + " of " + DATA.charts.length + " charts";
}
function fillSelect(id, values) {
  const s = document.getElementById(id);
  for (const v of values) h("option", {value: v}, v, s);
}
const regressions = DATA.steps.filter(s => s.direction === "slower");
const improvements = DATA.steps.filter(s => s.direction === "faster");
stepTable("regressions", regressions, "No regression found: no benchmark got slower beyond the threshold and the noise.");
stepTable("improvements", improvements, "No improvement beyond the threshold and the noise.");
stepTable("undone", DATA.undone, "None.");
document.getElementById("undone-count").textContent = DATA.undone.length;
stepTable("candidates", DATA.candidates, "None.");
document.getElementById("candidate-count").textContent = DATA.candidates.length;
stepTable("no-code-change", DATA.no_code_change, "None.", "the range's commits (none changes its code)");
document.getElementById("machine-count").textContent = DATA.no_code_change.length;
latestGrid();
failures();
document.getElementById("notes").textContent = DATA.notes;
fillSelect("machine", DATA.machines);
fillSelect("backend", DATA.backends);
const panels = document.getElementById("panels");
for (const c of DATA.charts) panels.appendChild(draw(c));
const params = new URLSearchParams(location.hash.slice(1));
for (const k of ["machine", "backend"]) if (params.get(k)) document.getElementById(k).value = params.get(k);
for (const k of ["machine", "backend"]) document.getElementById(k).addEventListener("change", applyFilter);
applyFilter();
document.body.dataset.ready = "1";
</script>
</body>
</html>
"""


def embed_json(data):
    """JSON that is safe inside <script>: no `</script>`, no `<!--` (which would make the HTML parser
    swallow the rest of the page), no NaN (which JSON.parse refuses)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _r(x):
    """x rounded for the page; 0 where it is no finite number. An int is a number too: a store line's
    median_ms of 10 (no samples) was drawn and listed as 0 ms."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return 0.0
    return round(float(x), 6)


def _series_data(s):
    return {"name": s.line_name, "benchmark": s.title, "color": palette.color(f"{s.backend}:{s.variant}"),
            "dashed": (not s.on_gpu) and s.threads > 1,
            "points": [{"commit": p.commit, "date": p.date, "ms": _r(p.median_ms), "busy": p.busy, "step": p.step,
                        "change": _r(p.change), "base": p.base, "n": len(p.samples), "reports": p.reports,
                        "lo": _r(min(p.samples or p.medians)), "hi": _r(max(p.samples or p.medians))}
                       for p in s.points]}


def page_data(a):
    from .history_charts import groups
    index = {c: i for i, c in enumerate(a.order)}
    charts = []
    for key, ss in sorted(groups(a.series).items(), key=lambda kv: (kv[0][0], _backend_rank(kv[0][1]), kv[0][2])):
        machine, backend, images = key
        commits = sorted({p.commit for s in ss for p in s.points}, key=lambda c: index.get(c, len(index)))
        charts.append({"machine": machine, "backend": backend, "images": images, "peer": ss[0].peer,
                       "commits": commits,
                       "series": [_series_data(s) for s in sorted(ss, key=lambda s: (s.variant, s.threads))]})
    steps = [_step(st) for st in a.steps]
    candidates = [_step(st) for st in getattr(a, "busy_steps", [])]
    unexplained = [_step(st) for st in getattr(a, "no_code_change", [])]
    undone = [_step(st) for st in getattr(a, "undone", [])]
    latest = []
    for machine in sorted({s.machine for s in a.series}):
        rows = []
        for s in sorted((s for s in a.series if s.machine == machine),
                        key=lambda s: (_backend_rank(s.backend), s.title)):
            last = s.points[-1]
            prev = s.points[-2] if len(s.points) > 1 else None
            rows.append({"benchmark": s.title, "backend": s.backend, "commit": last.commit, "ms": _r(last.median_ms),
                         "busy": last.busy, "prev": prev.commit if prev else "", "prev_ms": _r(prev.median_ms) if prev else 0,
                         "change": _r(last.median_ms / prev.median_ms - 1) if prev else 0.0, "step": last.step})
        latest.append({"machine": machine, "rows": rows})
    used = {c for st in a.steps + getattr(a, "busy_steps", []) + getattr(a, "no_code_change", [])
            + getattr(a, "undone", []) for c, _ in st.range} | \
        {p.commit for s in a.series for p in s.points} | {c for c, *_ in a.failures}
    return _finish(a, charts, steps, candidates, latest, used, unexplained, undone)


def _step(st):
    return {"benchmark": st.series.title, "machine": st.series.machine, "backend": st.series.backend,
              "direction": st.direction, "ratio": _r(st.ratio), "ms": _r(st.point.median_ms),
              "base_ms": _r(_base_ms(st)), "confidence": None if st.confidence is None else _r(st.confidence),
              "commit": st.point.commit, "base": st.point.base, "range": [c for c, _ in st.range],
              "suspects": st.suspects, "dirty": st.point.dirty, "evidence": st.evidence,
              "evidence_text": history.EVIDENCE.get(st.evidence, ""), "controls": len(st.controls),
              "drift": None if st.drift is None else _r(st.drift),
              "boot_ratio": None if st.boot_ratio is None else _r(st.boot_ratio), "boot_basis": st.boot_basis,
              "boot_build": st.boot_build, "boot_family": st.boot_family, "undone": st.undone,
              "confirm": _confirm_command(st)}


def _confirm_command(st):
    """How to rerun both commits of an unconfirmed CPU step in one boot: a backfill of the two (--again:
    the store has them already). A GPU step needs the two builds run on one GPU machine: no command."""
    s = st.series
    if st.evidence != "unconfirmed" or s.on_gpu or s.peer:
        return ""
    # Quoted: the names come from the store, and a reader pastes the line into a shell.
    return (f"scripts/history backfill {shlex.quote(st.point.base[:10])} {shlex.quote(st.point.commit[:10])} "
            f"--again --runs {gate.MIN_RUNS} "
            f"--backends {shlex.quote(f'{s.backend}:{s.variant}')} --images {s.images} --threads {s.threads}")


def _finish(a, charts, steps, candidates, latest, used, unexplained=(), undone=()):
    points = [p for s in a.series for p in s.points]
    busy = sum(p.busy for p in points)
    notes = (f"{len(a.entries)} store lines, {len(a.order)} commits, {len(a.series)} series, {len(points)} points; "
             f"{busy} point(s) measured on a busy machine"
             + (" (used for verdicts: --include-busy)." if a.include_busy else
                " (drawn hollow; not a base nor a verdict: --include-busy uses them)."))
    return {"charts": charts, "steps": steps, "candidates": candidates, "no_code_change": list(unexplained),
            "undone": list(undone),
            "latest": latest,
            "failures": [{"commit": c, "status": st, "error": err[:300]} for c, _, st, err in a.failures],
            "subjects": {c: a.subjects.get(c, "") for c in sorted(used)},
            "machines": sorted({s.machine for s in a.series}),
            "backends": sorted({s.backend for s in a.series}, key=_backend_rank), "notes": notes}


def _base_ms(st):
    for p in st.series.points:
        if p.commit == st.point.base:
            return p.median_ms
    return st.point.median_ms


def _backend_rank(b):
    return (palette.SUITE_ORDER.index(b) if b in palette.SUITE_ORDER else len(palette.SUITE_ORDER), b)


def render(analysis, commits=None, store_name=None, threshold=None):
    """The page of a history.Analysis (history.analyse). The older call render(series, commits,
    store_name, threshold) is still taken (make-results-readme)."""
    if not hasattr(analysis, "series"):
        from . import gate
        series_list = analysis
        order = list(commits or [])
        subjects = {}
        analysis = history.Analysis(store_name or "store.jsonl", [], order, subjects, series_list,
                                    history.steps(series_list, order, subjects), [],
                                    0.10 if threshold is None else threshold, gate.DEFAULT_ALPHA, False)
        palette.register_series(series_list)
    a = analysis
    busy_rule = ("count like the others (--include-busy)" if a.include_busy
                 else "are neither the base nor the verdict of a step")
    return PAGE % {"title": "Benchmark history", "store": html.escape(a.store_name), "data": embed_json(page_data(a)),
                   "threshold": f"{100 * a.threshold:g} %", "alpha": f"{a.alpha:g}", "busy_rule": busy_rule,
                   "min_controls": history.MIN_CONTROLS}
