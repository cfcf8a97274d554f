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


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name, m in MANIFESTS.items():
        (tmp_path / "backends" / name).mkdir(parents=True)
        (tmp_path / "backends" / name / "manifest.json").write_text(json.dumps(m))
    suite = tmp_path / "suite"
    suite.write_text("#!/bin/sh\ncat <<'EOF'\n" + json.dumps(LIST) + "\nEOF\n")
    suite.chmod(suite.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(manifests, "BACKENDS_DIR", tmp_path / "backends")
    return str(suite)


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
    with pytest.raises(SystemExit) as e:
        backends_main.main(["--variants"])
    assert e.value.code == 2 and "need --suite" in capsys.readouterr().err
    from suitereport.load import ReportError
    with pytest.raises(ReportError, match="cannot run it"):
        backends_main.main(["--suite", str(tmp_path / "missing")])
    with pytest.raises(ReportError, match="expected FIELD"):
        backends_main.main(["--where", "=x"])
