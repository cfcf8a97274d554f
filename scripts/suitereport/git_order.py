"""The order of the store's commits: git's topological order (`git rev-list --topo-order`) of the
repository the tools run in, never the dates of the reports (a report of an old commit made today would
otherwise land at the end, and two commits of one minute in any order).

Commits the repository does not know (a store from elsewhere, a rebased branch) keep their place by the
store's own git_order (`git rev-list --count` at backfill time) where they have one, else by the date of
their first report: each goes after the last known commit that comes before it by that measure.
"""

import subprocess
from pathlib import Path

from . import identity


def _git(repo, *args):
    """git's standard output, or "" where git cannot say (no git, not a repository, an unknown commit)."""
    try:
        r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return r.stdout if r.returncode == 0 else ""


def _git_log(repo):
    """[(commit, subject)] oldest first in topological order of HEAD, or [] where git cannot say."""
    out = []
    for line in _git(repo, "log", "--topo-order", "--reverse", "--format=%H%x00%s", "HEAD").splitlines():
        commit, _, subject = line.partition("\x00")
        if len(commit) == 40:
            out.append((commit, subject))
    return out


def order(entries, repo=None):
    """(commits oldest first, {commit: subject}) for the commits of the entries."""
    repo = Path(repo) if repo else identity.REPO_ROOT
    log = _git_log(repo)
    topo = {c: i for i, (c, _) in enumerate(log)}
    subjects = {c: s for c, s in log}
    first_date, git_count = {}, {}
    for e in sorted(entries, key=lambda e: (e["date_utc"], e["id"])):
        c = e["git_commit"]
        first_date.setdefault(c, e["date_utc"])
        if isinstance(e.get("git_order"), int) and not isinstance(e.get("git_order"), bool):
            git_count.setdefault(c, e["git_order"])
        if e.get("git_subject") and c not in subjects:
            subjects[c] = e["git_subject"]
    known = sorted((c for c in first_date if c in topo), key=topo.get)
    unknown = [c for c in first_date if c not in topo]
    # Known commits' measures for placing the unknown ones: their count along history (the topological
    # position + 1 is the count on a linear history, close enough to place a stranger) and their date.
    placed = list(known)
    for c in sorted(unknown, key=lambda c: (git_count.get(c, 1 << 60), first_date[c], c)):
        if c in git_count:
            after = [i for i, k in enumerate(placed) if (topo[k] + 1 if k in topo else git_count.get(k, 0)) <= git_count[c]]
        else:
            after = [i for i, k in enumerate(placed) if first_date[k] <= first_date[c]]
        placed.insert(after[-1] + 1 if after else 0, c)
    return placed, subjects


def commits_between(repo, older, newer):
    """The commits after `older` up to `newer`, oldest first (git rev-list --topo-order older..newer)."""
    return _git(repo, "rev-list", "--topo-order", "--reverse", f"{older}..{newer}").split()


# What no backend runs: results, documents, the report tools and tests, CI, the embedded data.
NOT_RUN = ("results", "*.md", "scripts", "tests", ".ci", "fuzz", "benchmarks", "data")


def code_of(backend, backends):
    """Git pathspecs of the code a backend's runs depend on, nearest first: (why, pathspecs) for its own
    folder, the shared kernels under backends/ (folders of none of `backends`: the manifests' list and the
    backend itself), and the rest of the code (common/, suite/, the build); never what no backend runs or
    the other backends' folders."""
    not_run = [f":(exclude){p}" for p in NOT_RUN]
    return [("its folder", [f"backends/{backend}"] + not_run),
            ("shared kernels", ["backends"] + not_run + [f":(exclude)backends/{b}" for b in sorted(backends)]),
            ("common code", ["."] + not_run + [":(exclude)backends"])]


def commits_touching(repo, older, newer, paths):
    """The commits after `older` up to `newer` that change a file under one of `paths` (git rev-list
    older..newer -- paths), as a set; empty where git cannot say."""
    return set(_git(repo, "rev-list", f"{older}..{newer}", "--", *paths).split())
