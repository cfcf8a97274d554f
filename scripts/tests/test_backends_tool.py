"""scripts/backends: backends chosen by their manifests' fields, for the shell scripts and CMake lines."""

import json
import stat
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from suitereport import backends_main, manifests  # noqa: E402

MANIFESTS = {
    "beta": {"order": 2, "kind": "gpu", "slow": ["layers"], "cuda_build": "nvcc"},
    "alpha": {"order": 1, "kind": "cpu", "host_libraries": ["libfoo"], "scaling": ["tiled"]},
    "gamma": {"order": 3, "kind": "gpu", "host_fallback": True},
}
LIST = {"backends": [
    {"name": "alpha", "kind": "cpu", "built": True, "runnable": True, "variants": [{"name": "naive"}, {"name": "tiled"}]},
    {"name": "beta", "kind": "gpu", "built": True, "runnable": False, "variants": [{"name": "layers"}, {"name": "fused"}]},
    {"name": "gamma", "kind": "gpu", "built": False, "runnable": False, "variants": []},
]}


def write_manifests(root, texts):
    for name, text in texts.items():
        (root / name).mkdir(parents=True)
        (root / name / "manifest.json").write_text(text if isinstance(text, str) else json.dumps(text))
    return root


def fake_suite(folder, stdout, rc=0, stderr=""):
    """A `suite` whose --list --format json prints `stdout` (and `stderr`) and exits `rc`."""
    suite = folder / "fake-suite"
    suite.write_text(f"#!/bin/sh\ncat <<'EOF'\n{stdout}\nEOF\necho '{stderr}' >&2\nexit {rc}\n")
    suite.chmod(suite.stat().st_mode | stat.S_IXUSR)
    return str(suite)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    write_manifests(tmp_path / "backends", MANIFESTS)
    monkeypatch.setattr(manifests, "BACKENDS_DIR", tmp_path / "backends")
    return fake_suite(tmp_path, json.dumps(LIST))


def out(capsys, *argv):
    assert backends_main.main(list(argv)) == 0
    return capsys.readouterr().out.strip()


def test_selections_follow_the_manifests_order_and_fields(tree, capsys):
    assert out(capsys) == "alpha,beta,gamma"
    assert out(capsys, "--where", "kind=gpu") == "beta,gamma"
    assert out(capsys, "--where", "kind=gpu", "--where", "!host_fallback") == "beta"
    assert out(capsys, "--where", "!host_libraries", "--cmake-off") == "-DWITH_ALPHA=OFF"
    assert out(capsys, "--where", "cuda_build=nvcc,nvcc_wrapper", "--cmake-on") == "-DWITH_BETA=ON"
    assert out(capsys, "--where", "host_libraries", "--libraries") == "libfoo"


def test_with_a_suite_only_what_it_built_and_can_run(tree, capsys):
    assert out(capsys, "--suite", tree) == "alpha,beta"
    assert out(capsys, "--suite", tree, "--runnable") == "alpha"
    assert out(capsys, "--suite", tree, "--where", "kind=gpu", "--variants", "--fast") == "beta:fused"
    assert out(capsys, "--suite", tree, "--variants", "--slow") == "beta:layers"
    assert out(capsys, "--suite", tree, "--variants", "--scaling") == "alpha:tiled"


def test_bad_input_is_one_line_and_exit_2(tree, tmp_path, capsys):
    for needs_a_suite in ("--variants", "--runnable"):
        with pytest.raises(SystemExit) as e:
            backends_main.main([needs_a_suite])
        assert e.value.code == 2 and "need --suite" in capsys.readouterr().err, needs_a_suite
    from suitereport.load import ReportError
    with pytest.raises(ReportError, match="cannot run it"):
        backends_main.main(["--suite", str(tmp_path / "missing")])
    with pytest.raises(ReportError, match="expected FIELD"):
        backends_main.main(["--where", "=x"])


# ---- suitereport/manifests.py: what the report tools take from the manifests


def test_manifests_order_is_order_then_name_and_a_broken_one_is_empty(tmp_path):
    # "zeta" and "alpha" sort against their names: only the "order" field can put zeta first. A manifest
    # without an order, one that is not JSON and one that is not an object all come last, by name, as {}.
    root = write_manifests(tmp_path, {"zeta": {"order": 1}, "alpha": {"order": 2}, "mid": {"kind": "cpu"},
                                      "broken": "{not json", "listed": "[1, 2]"})
    got = manifests.manifests(root)
    assert list(got.items()) == [("zeta", {"order": 1}), ("alpha", {"order": 2}), ("broken", {}),
                                 ("listed", {}), ("mid", {"kind": "cpu"})]


@pytest.fixture
def fields(tmp_path, monkeypatch):
    """Manifests whose order differs from their names' and whose fields try every odd value a reader keeps out."""
    root = write_manifests(tmp_path / "backends", {
        "zcpu": {"order": 1, "kind": "cpu", "vendor": True, "label": "Z CPU", "baseline": True,
                 "history": "fast", "cpu_build": "  "},
        "ygpu": {"order": 2, "kind": "gpu", "vendor": True, "label": "Y GPU", "history": ["a", "b"]},
        "xport": {"order": 3, "kind": "portable", "vendor": True, "baseline": "naive",
                  "cpu_build": "hook.sh --flag value"},
        "wnot": {"order": 4, "kind": "gpu", "vendor": "yes", "cpu_build": "other.sh"},
    })
    monkeypatch.setattr(manifests, "BACKENDS_DIR", root)
    return root


def test_suite_order_puts_the_peer_after_the_backends(fields):
    assert manifests.suite_order() == ("zcpu", "ygpu", "xport", "wnot", "pytorch")


def test_baseline_is_the_first_manifest_whose_baseline_names_a_variant(fields, tmp_path, monkeypatch):
    assert manifests.baseline() == ("xport", "naive")  # zcpu's "baseline": true names no variant
    monkeypatch.setattr(manifests, "BACKENDS_DIR", write_manifests(tmp_path / "none", {"a": {"order": 1}}))
    assert manifests.baseline() == ("", "")


def test_vendor_peers_read_gpu_libraries_then_the_peer_then_the_rest(fields):
    # Only "vendor": true counts; a portable library is no GPU library; a label missing is the name.
    assert list(manifests.vendor_peers().items()) == [("ygpu", "Y GPU"), ("pytorch", "PyTorch"),
                                                      ("zcpu", "Z CPU"), ("xport", "xport")]


def test_history_set_takes_only_lists_of_variants(fields):
    assert manifests.history_set() == ("ygpu:a", "ygpu:b")  # zcpu's "fast" is no list: not f, a, s, t


def test_cpu_build_hooks_are_the_chosen_backends_scripts_with_their_arguments(fields):
    hooks = manifests.cpu_build_hooks({"zcpu", "xport"})  # zcpu's hook is blank, wnot is not chosen
    assert hooks == [("xport", [str(fields / "xport" / "hook.sh"), "--flag", "value"])]
    assert manifests.cmake_off({"xport", "ygpu"}) == ["-DWITH_ZCPU=OFF", "-DWITH_WNOT=OFF"]


# ---- scripts/backends on odd fields and odd suites


@pytest.fixture
def odd(tmp_path, monkeypatch):
    write_manifests(tmp_path / "backends", {
        "one": {"order": 1, "host_fallback": True, "label": "", "host_libraries": ["liba", "libb"]},
        "two": {"order": 2, "host_fallback": False, "label": "Two", "host_libraries": []},
        "three": {"order": 3, "host_libraries": "libc"},
    })
    monkeypatch.setattr(manifests, "BACKENDS_DIR", tmp_path / "backends")
    return tmp_path


def test_where_reads_false_and_empty_as_unset_and_true_as_the_word_true(odd, capsys):
    assert out(capsys, "--where", "host_fallback") == "one"  # false is not set
    assert out(capsys, "--where", "label") == "two"  # nor is ""
    assert out(capsys, "--where", "host_fallback=true") == "one"
    assert out(capsys, "--where", "!host_libraries") == "two"  # nor is []


def test_libraries_is_one_ere_of_every_chosen_library_a_list_or_a_word(odd, capsys):
    assert out(capsys, "--libraries") == "liba|libb|libc"


def test_variants_leave_out_a_backend_the_suite_did_not_build(odd, capsys):
    listed = {"backends": [{"name": "one", "built": False, "runnable": False, "variants": [{"name": "x"}]},
                           {"name": "two", "built": True, "runnable": True, "variants": [{"name": "y"}]}]}
    suite = fake_suite(odd, json.dumps(listed))
    assert out(capsys, "--suite", suite, "--variants") == "two:y"


@pytest.mark.parametrize("stdout, rc, why", [
    ("{}", 0, "is not the expected JSON"),  # no "backends"
    ("[]", 0, "is not the expected JSON"),  # not an object
    ("not json", 0, "is not the expected JSON"),
    ('{"backends": []}', 3, "--list --format json exited 3: boom"),  # its output is not trusted
])
def test_a_suite_whose_list_is_not_usable_is_one_error(odd, stdout, rc, why):
    from suitereport.load import ReportError
    with pytest.raises(ReportError, match=why):
        backends_main.main(["--suite", fake_suite(odd, stdout, rc, "boom")])
