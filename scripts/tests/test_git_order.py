"""Tests of suitereport/git_order.py: the order of the store's commits (git's, then the store's own
measures for commits git does not know) and which files a backend's runs depend on. Each test pins a
behaviour that a mutation of git_order.py changed without any other test noticing."""

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from git_repos import ThrowawayRepo  # noqa: E402
from suitereport import git_order  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A repository of three commits c1 < c2 < c3 (subjects "one", "two", "three")."""
    repo = ThrowawayRepo(tmp_path_factory.mktemp("git") / "repo")
    for subject in ("one", "two", "three"):
        repo.commit(subject, {"f": subject})
    return repo.path, repo.commits


def entry(commit, day, **extra):
    e = {"git_commit": commit, "date_utc": f"2026-11-{day:02d}T00:00:00Z", "id": f"{commit[:6]}-{day}"}
    e.update(extra)
    return e


U, V = "e" * 40, "f" * 40  # commits the repository does not know


def test_known_commits_are_in_git_order_whatever_their_dates(repo):
    root, (c1, c2, c3) = repo
    placed, subjects = git_order.order([entry(c3, 1), entry(c1, 2), entry(c2, 3)], root)
    assert placed == [c1, c2, c3]
    assert subjects[c1] == "one"


def test_gits_subject_wins_over_the_stores(repo):
    """The store's git_subject is for commits git does not know."""
    root, (c1, c2, c3) = repo
    _, subjects = git_order.order([entry(c1, 1, git_subject="stale"), entry(U, 2, git_subject="elsewhere")], root)
    assert subjects[c1] == "one" and subjects[U] == "elsewhere"


@pytest.mark.parametrize("count, where", [(1, 1), (2, 2), (3, 3), (0, 0)])
def test_an_unknown_commit_goes_after_the_last_known_one_of_its_count(repo, count, where):
    """git_order N (rev-list --count): after the known commit that is the N-th along history."""
    root, commits = repo
    placed, _ = git_order.order([entry(c, i + 1) for i, c in enumerate(commits)] + [entry(U, 9, git_order=count)],
                                root)
    assert placed == commits[:where] + [U] + commits[where:]


def test_an_unknown_commit_without_a_count_goes_by_its_first_date(repo):
    """Its first report's date, ties after the known commit: not its latest report's."""
    root, (c1, c2, c3) = repo
    entries = [entry(c1, 1), entry(c2, 5), entry(c3, 7), entry(U, 9), entry(U, 5), entry(V, 1)]
    placed, _ = git_order.order(entries, root)
    assert placed == [c1, V, c2, U, c3]


def test_a_boolean_git_order_is_no_count(repo):
    """git_order: true is ignored (the date places the commit), not read as 1."""
    root, (c1, c2, c3) = repo
    placed, _ = git_order.order([entry(c1, 1), entry(c2, 2), entry(c3, 3), entry(U, 9, git_order=True)], root)
    assert placed == [c1, c2, c3, U]


def test_commits_with_counts_are_placed_before_those_by_date(repo):
    """Counted strangers are placed first (a dated one would pull a counted one to the end)."""
    root, (c1, c2, c3) = repo
    entries = [entry(c1, 1), entry(c2, 2), entry(c3, 3), entry(U, 9, git_order=1), entry(V, 5)]
    placed, _ = git_order.order(entries, root)
    assert placed == [c1, U, c2, c3, V]


# ---- which files a run depends on


@pytest.mark.parametrize("path, run", [
    ("backends/serial/k.cpp", True), ("backends/serial/README.md", False), ("scripts/report", False),
    ("scriptsx/a.cpp", True), ("backends/serial/k_test.cpp", False), ("results", False), ("common/c.hpp", True),
])
def test_what_no_run_executes(path, run):
    """Results, documents, scripts and tests, matched as git matches the pathspecs."""
    assert git_order._run(path) is run


def test_paths_are_normalised():
    assert git_order._normal("backends/a/../shared/./k.hpp") == "backends/shared/k.hpp"
    assert git_order._normal("../x") == "x"


def test_the_include_closure_follows_relative_includes_and_a_headers_source():
    """"k.hpp" from backends/a/x.cpp is backends/a/k.hpp; a header brings its .cpp (its definitions)."""
    tree = {"backends/a/x.cpp", "backends/a/k.hpp", "backends/a/k.cpp", "common/c.hpp", "backends/b/y.cpp"}
    includes = {"backends/a/x.cpp": ["k.hpp", "common/c.hpp"], "backends/a/k.cpp": ["missing.hpp"]}
    assert git_order._closure(["backends/a/x.cpp"], tree, includes) == \
        {"backends/a/x.cpp", "backends/a/k.hpp", "backends/a/k.cpp", "common/c.hpp"}


def test_a_backends_own_folder_leaves_out_what_no_run_executes():
    [(why, paths), *_] = git_order.code_of("serial", ["serial", "openmp"])
    assert why == "its folder" and paths[0] == "backends/serial"
    assert ":(exclude)*.md" in paths and ":(exclude)results" in paths


def _repo_of(root, versions):
    """A repository with one commit per {path: text} of versions (files added or replaced); its commits."""
    repo = ThrowawayRepo(root)
    for files in versions:
        repo.commit("v", files)
    return repo.commits


def test_only_files_that_are_another_variants_at_both_ends_are_left_out(tmp_path):
    """common/x.hpp is naive's alone at the older commit but tiles' too at the newer: a change to it may
    have moved tiles, so it stays in tiles' code; naive.hpp, naive's at both ends, is left out (that a
    test includes it too does not make it anyone's)."""
    repo = tmp_path / "repo"
    older, newer = _repo_of(repo, [
        {"backends/serial/tiles.cpp": 'const char* v = "tiles";\n',
         "backends/serial/naive.cpp": '#include "common/x.hpp"\n#include "common/naive.hpp"\nconst char* v = "naive";\n',
         "common/x.hpp": "// x\n", "common/naive.hpp": "// naive\n",
         "backends/serial/naive_test.cpp": '#include "common/naive.hpp"\n'},  # a test: no run's, nor anyone's
        {"backends/serial/tiles.cpp": '#include "common/x.hpp"\nconst char* v = "tiles";\n'}])
    variants = [("serial", "tiles"), ("serial", "naive")]
    assert git_order.others_only(repo, older, ("serial", "tiles"), variants) == {
        "backends/serial/naive.cpp", "common/x.hpp", "common/naive.hpp"}
    code = git_order.code_of_variant(repo, older, newer, ("serial", "tiles"), variants, ["serial"])
    excluded = {p for _, paths in code for p in paths if p.startswith(":(exclude)") and "/" in p}
    assert ":(exclude)common/naive.hpp" in excluded and ":(exclude)backends/serial/naive.cpp" in excluded
    assert ":(exclude)common/x.hpp" not in excluded
