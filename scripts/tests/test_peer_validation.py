"""The PyTorch peer validates as the suite does (suite/validation.cpp): same fields, same rule."""
import importlib
import sys
import types
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture
def peer(monkeypatch):
    # A stand-in torch (the real one takes seconds to import): validate() needs only numpy.
    torch = types.ModuleType("torch")
    torch.nn = types.SimpleNamespace(Module=object)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delitem(sys.modules, "peer_pytorch", raising=False)
    return importlib.import_module("peer_pytorch")


def reference(n=4):
    rng = np.random.default_rng(7)
    r = rng.random((n, 10)) + np.eye(10)[:n] * 3  # class i clearly first for image i
    return r / r.sum(1, keepdims=True)


def test_close_probabilities_pass_and_name_the_worst_image(peer):
    ref = reference()
    probs = ref.astype(np.float32)
    probs[2, 5] += 5e-5
    v = peer.validate(probs, ref, 4)
    assert v["passed"] and v["compared"] == 4 and v["worst_image"] == 2
    assert v["max_abs_prob_diff"] == pytest.approx(5e-5, rel=1e-2)


def test_no_image_compared_is_no_pass(peer):
    v = peer.validate(np.zeros((0, 10), np.float32), reference(), 4)
    assert v["compared"] == 0 and not v["passed"]


def test_nan_fails_with_an_infinite_difference(peer):
    probs = reference().astype(np.float32)
    probs[1, 0] = np.nan
    v = peer.validate(probs, reference(), 4)
    assert not v["passed"] and v["max_abs_prob_diff"] == float("inf") and v["worst_image"] == 1


def test_a_wrong_class_beyond_the_tolerance_fails(peer):
    probs = reference().astype(np.float32)
    probs[3] = np.roll(probs[3], 1)
    v = peer.validate(probs, reference(), 4)
    assert not v["passed"] and v["top1_mismatches"] == 1


def test_images_cycle_through_the_reference(peer):
    ref = reference(2)
    probs = np.concatenate([ref, ref, ref]).astype(np.float32)
    v = peer.validate(probs, ref, 2)
    assert v["passed"] and v["compared"] == 6


def test_code_of_reads_the_suite_reports_commit(peer, tmp_path):
    # On the GPU machine the tree is a carried copy whose git named an older commit, dirty: the peer now
    # records the commit of the suite report of the same session instead.
    report = tmp_path / "gpu-suite.json"
    report.write_text('{"schema_version": 1, "meta": {"git_commit": "9ed3623c9f", "git_dirty": false}, "runs": []}')
    assert peer.code_of(str(report)) == ("9ed3623c9f", False)


@pytest.mark.parametrize("text", ["", "[1]", '{"meta": {"git_commit": "abc"}}',
                                  '{"meta": {"git_commit": 7, "git_dirty": false}}',
                                  '{"meta": {"git_commit": "abc", "git_dirty": "no"}}'])
def test_code_of_a_file_that_is_no_suite_report_exits_3(peer, tmp_path, capsys, text):
    report = tmp_path / "r.json"
    report.write_text(text)
    with pytest.raises(SystemExit) as e:
        peer.code_of(str(report))
    assert e.value.code == 3
    assert "--code-of" in capsys.readouterr().err


def test_code_of_a_missing_file_exits_3(peer, tmp_path):
    with pytest.raises(SystemExit) as e:
        peer.code_of(str(tmp_path / "none.json"))
    assert e.value.code == 3


def test_an_output_among_the_inputs_or_in_their_folders_is_refused_before_any_work(peer, tmp_path, capsys):
    data, weights = tmp_path / "cifar10", tmp_path / "weights"
    data.mkdir()
    weights.mkdir()
    for f in (data / "data_batch_1.bin", data / "test_batch.bin", weights / "layer1_conv.txt"):
        f.write_text("input")
    elsewhere = tmp_path / "alias.bin"
    elsewhere.hardlink_to(data / "data_batch_1.bin")
    for out in (data / "test_batch.bin", weights / "layer1_conv.txt", elsewhere):
        with pytest.raises(SystemExit) as e:
            peer.refuse_output_among_inputs(str(out), [str(data)], str(weights))
        assert e.value.code == 2 and "refused and kept" in capsys.readouterr().err
    peer.refuse_output_among_inputs(str(data / "new.json"), [str(data)], str(weights))  # a new name is fine
    peer.refuse_output_among_inputs(str(tmp_path / "r.json"), [str(data / "data_batch_1.bin")], str(weights))
