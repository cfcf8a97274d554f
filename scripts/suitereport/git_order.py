"""The order of the store's commits: git's topological order (`git rev-list --topo-order`) of the
repository the tools run in, never the dates of the reports (a report of an old commit made today would
otherwise land at the end, and two commits of one minute in any order).

Commits the repository does not know (a store from elsewhere, a rebased branch) keep their place by the
store's own git_order (`git rev-list --count` at backfill time) where they have one, else by the date of
their first report: each goes after the last known commit that comes before it by that measure.
"""

import fnmatch
import subprocess
from functools import lru_cache
from pathlib import Path

from . import identity


def _git(repo, *args, text=True):
    """git's standard output (bytes where not text), or an empty one where git cannot say (no git, not a
    repository, an unknown commit)."""
    empty = "" if text else b""
    try:
        r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=text, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return empty
    return r.stdout if r.returncode == 0 else empty


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
    # --end-of-options: the ids come from reports, and one starting with '-' must not be read as an option
    # (`--output=FILE` would truncate FILE).
    return _git(repo, "rev-list", "--topo-order", "--reverse", "--end-of-options", f"{older}..{newer}").split()


# What no backend runs: results, documents, the report tools and tests (also a backend's own, <name>_test.*),
# CI, the embedded data.
NOT_RUN = ("results", "*.md", "scripts", "tests", "*_test.cpp", "*_test.cu", ".ci", "fuzz", "benchmarks", "data")


def code_of(backend, backends):
    """Git pathspecs of the code a backend's runs depend on, nearest first: (why, pathspecs) for its own
    folder, the shared kernels under backends/ (folders of none of `backends`: the manifests' list and the
    backend itself), and the rest of the code (common/, suite/, the build); never what no backend runs or
    the other backends' folders. The broad answer, where the variant's own files are unknown (code_of_variant)."""
    not_run = [f":(exclude){p}" for p in NOT_RUN]
    return [("its folder", [f"backends/{backend}"] + not_run),
            ("shared kernels", ["backends"] + not_run + [f":(exclude)backends/{b}" for b in sorted(backends)]),
            ("common code", ["."] + not_run + [":(exclude)backends"])]


SOURCES = ("*.cpp", "*.cc", "*.cu", "*.hpp", "*.h", "*.cuh", "*.inl")
HEADER_SUFFIXES = (".hpp", ".h", ".cuh", ".inl")
SOURCE_SUFFIXES = (".cpp", ".cc", ".cu")


def _strip(commit, where):
    return where[len(commit) + 1:] if where.startswith(commit + ":") else where


@lru_cache(maxsize=64)
def _tree(repo, commit):
    return frozenset(_git(repo, "ls-tree", "-r", "--name-only", commit).splitlines())


@lru_cache(maxsize=64)
def _quoted_includes(repo, commit):
    """{path: [included names]} of the repository's C++/CUDA files at `commit` (one git grep)."""
    out = {}
    for line in _git(repo, "grep", "-z", "-I", "--no-color", "-e", '#include "', commit, "--", *SOURCES).splitlines():
        where, _, text = line.partition("\0")
        name = text.split('"')
        if len(name) >= 3 and text.lstrip().startswith("#include"):
            out.setdefault(_strip(commit, where), []).append(name[1])
    return out


@lru_cache(maxsize=64)
def _naming_files(repo, commit, variants):
    """{(backend, variant): [source files under backends/<backend>/ that hold the variant's name as a string
    literal: where it is registered]} at `commit` (one git grep)."""
    names = sorted({v for _, v in variants})
    if not names:
        return {}
    args = ["grep", "-z", "-o", "-I", "--no-color", "-F"]
    for v in names:
        args += ["-e", f'"{v}"']
    found = {}
    for line in _git(repo, *args, commit, "--", "backends").splitlines():
        where, _, text = line.partition("\0")
        path = _strip(commit, where)
        if path.endswith(SOURCE_SUFFIXES + HEADER_SUFFIXES) and _run(path):
            found.setdefault((path.split("/")[1] if path.count("/") >= 2 else "", text.strip('"')), set()).add(path)
    return {k: sorted(found.get(k, ())) for k in variants}


def _closure(roots, tree, includes):
    """The roots and every repository file they include with "..." (from the repository root or the including
    file's folder), transitively, with the source file beside each included header (its definitions)."""
    seen, todo = set(), list(roots)
    while todo:
        path = todo.pop()
        if path in seen or path not in tree:
            continue
        seen.add(path)
        here = path.rsplit("/", 1)[0] if "/" in path else ""
        for name in includes.get(path, []):
            for cand in (name, f"{here}/{name}" if here else name):
                cand = _normal(cand)
                if cand in tree:
                    todo.append(cand)
                    break
        if path.endswith(HEADER_SUFFIXES):
            stem = path.rsplit(".", 1)[0]
            todo += [stem + suffix for suffix in SOURCE_SUFFIXES if stem + suffix in tree]
    return seen


def _normal(path):
    parts = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _run(path):
    """A file some run may execute: none of NOT_RUN's pathspecs matches it (a top folder, or a name pattern
    anywhere, as git matches them)."""
    return not any(path == p or path.startswith(p + "/") or fnmatch.fnmatchcase(path, p) for p in NOT_RUN)


@lru_cache(maxsize=64)
def _registration_closures(repo, commit, variants):
    """({variant: the include closure of the files that register it}, the closure of every source file no
    registration reaches) at `commit`, or None where git has no tree for it."""
    tree = _tree(repo, commit)
    if not tree:
        return None
    includes = _quoted_includes(repo, commit)
    closures = {v: _closure(roots, tree, includes) for v, roots in _naming_files(repo, commit, variants).items()}
    reached = set().union(*closures.values())
    unowned = [f for f in tree if f.endswith(SOURCE_SUFFIXES) and f not in reached and _run(f)]
    return closures, _closure(unowned, tree, includes)


def others_only(repo, commit, variant, variants):
    """The files that, at `commit`, only other variants are built from: in the include closure (_closure) of
    a file that registers another of `variants` ((backend, name) pairs), and neither in this variant's nor in
    that of a source file no registration reaches (the harness, a kernel that is linked, not included: those
    may be anyone's, and so is what they include). None where the variant's own registration is not found
    (then nothing is excluded)."""
    found = _registration_closures(str(repo), commit, frozenset(variants) | {variant})
    if found is None or not found[0].get(variant):
        return None
    closures, anyones = found
    theirs = set().union(*(c for v, c in closures.items() if v != variant))
    return theirs - closures[variant] - anyones


def code_of_variant(repo, older, newer, variant, variants, backends):
    """code_of for one (backend, variant), less the files only other variants are built from at both ends
    of the range (others_only at `older` and at `newer`): a commit that changes only another variant's
    kernel (its file, the headers only it includes) cannot have moved this one."""
    backend = variant[0]
    ends = [others_only(repo, c, variant, variants) for c in (older, newer)]
    out = code_of(backend, backends)
    if any(e is None for e in ends):
        return out
    drop = [f":(exclude){f}" for f in sorted(ends[0] & ends[1])]
    return [(why, paths + drop) for why, paths in out]


def commits_touching(repo, older, newer, paths):
    """The commits after `older` up to `newer` that change a file under one of `paths` (git rev-list
    older..newer -- paths), as a set; empty where git cannot say."""
    return set(_git(repo, "rev-list", "--end-of-options", f"{older}..{newer}", "--", *paths).split())
