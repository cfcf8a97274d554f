"""Tests of suitereport/safe_io.py, through which every file the report tools read or write goes:
bounded reads of regular files only, atomic writes that follow no link and replace no input,
all-or-nothing appends. Each test pins a check that a mutation of safe_io.py removed without any
other test noticing."""

import os
import stat
import sys
import tracemalloc
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from suitereport import safe_io  # noqa: E402


@pytest.fixture(autouse=True)
def _no_inputs_yet():
    """Each test starts as a new command does: no file read yet."""
    safe_io.forget_inputs()
    yield
    safe_io.forget_inputs()


def refused(call, *args, **kwargs):
    with pytest.raises(safe_io.UnsafePath) as e:
        call(*args, **kwargs)
    return str(e.value)


# ---- reading


def test_a_missing_input_says_no_such_file(tmp_path):
    """Not "cannot read": the user misspelt a name."""
    assert refused(safe_io.read_text, tmp_path / "nope.json", "report") == f"{tmp_path / 'nope.json'}: no such report"


def test_a_folder_as_input_says_it_is_a_folder(tmp_path):
    """Not "a device, FIFO or socket": a folder is named as one."""
    assert refused(safe_io.check_input, tmp_path, "store") == f"{tmp_path}: is a folder, not a store"


def test_a_device_is_refused_by_the_check_alone():
    """check_input (history's inputs) refuses /dev/null before anything opens it."""
    assert "/dev/null: not a regular file" in refused(safe_io.check_input, "/dev/null")


def test_the_size_limit_is_inclusive_and_says_the_size(tmp_path):
    """A file of exactly `limit` bytes is read; one byte more is refused, naming its size."""
    path = tmp_path / "r.json"
    path.write_bytes(b"x" * 10)
    assert safe_io.read_bytes(path, limit=10) == b"x" * 10
    assert safe_io.check_input(path, limit=10).st_size == 10
    assert refused(safe_io.check_input, path, limit=9) == f"{path}: 10 bytes, over the 0 MiB these tools read"


def test_the_size_limit_is_said_in_mib(tmp_path, monkeypatch):
    """The default limit (MAX_INPUT_BYTES) applies where none is given, and is shown in MiB."""
    monkeypatch.setattr(safe_io, "MAX_INPUT_BYTES", 2 * 1024 * 1024)
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    assert refused(safe_io.read_text, path).endswith("bytes, over the 2 MiB these tools read")


def test_a_file_that_grows_after_the_check_is_read_only_to_the_limit(tmp_path, monkeypatch):
    """The check passed, then the file grew: read_bytes reads limit + 1 bytes at most and refuses it."""
    path = tmp_path / "growing.json"
    path.write_bytes(b"x" * (8 * 1024 * 1024))
    monkeypatch.setattr(safe_io, "check_input", lambda *a, **k: None)  # the file as it was at the check
    tracemalloc.start()
    try:
        message = refused(safe_io.read_bytes, path, limit=1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message == f"{path}: over the 0 MiB these tools read"
    assert peak < 1024 * 1024, peak
    path.write_bytes(b"x" * 1001)  # one byte over: refused too
    assert "over the" in refused(safe_io.read_bytes, path, limit=1000)


def test_text_that_is_not_utf8_is_refused_with_its_byte(tmp_path):
    """A binary file is one error line, not a report of replacement characters."""
    path = tmp_path / "r.json"
    path.write_bytes(b'{"a": "\xff"}')
    assert refused(safe_io.read_text, path) == f"{path}: not UTF-8 text (byte 7)"


def test_a_file_read_is_no_output_until_the_next_command(tmp_path):
    """write_bytes refuses to replace an input of this command; forget_inputs (a new command) ends that."""
    path = tmp_path / "store.jsonl"
    path.write_text("old\n")
    safe_io.read_text(path)
    assert "is one of this command's inputs" in refused(safe_io.write_text, path, "new\n")
    assert path.read_text() == "old\n"
    safe_io.forget_inputs()
    safe_io.write_text(path, "new\n")
    assert path.read_text() == "new\n"
    safe_io.read_text(path)
    safe_io.write_text(path, "edit\n", replaces_input=True)  # an edit of the input says so
    assert path.read_text() == "edit\n"


# ---- where a file is written


def test_an_empty_output_path_is_named_so(tmp_path):
    """Path("") (argparse's type=Path of '') is "." : an empty path, not "is a folder"."""
    assert refused(safe_io.check_output, Path("")) == "an empty output path"
    assert refused(safe_io.check_output, "") == "an empty output path"


def test_an_output_name_over_255_bytes_is_refused_before_any_work(tmp_path):
    """255 bytes is the longest file name; 256 is refused in one line."""
    assert safe_io.check_output(tmp_path / ("x" * 255)) == tmp_path
    assert refused(safe_io.check_output, tmp_path / ("x" * 256)).endswith("file name too long (256 bytes, at most 255)")


def test_a_file_of_the_longest_name_is_written(tmp_path):
    """A 255-byte name: its temporary's name is cut so that it fits too."""
    safe_io.write_text(tmp_path / ("x" * 255), "x\n")
    assert [p.name for p in tmp_path.iterdir()] == ["x" * 255]


def test_an_output_folder_is_made_with_its_parents(tmp_path):
    """plot --out a/b/c creates a, b and c."""
    assert safe_io.make_dir(tmp_path / "a" / "b" / "c") == tmp_path / "a" / "b" / "c"
    assert (tmp_path / "a" / "b" / "c").is_dir()


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_replaced_file_keeps_its_permissions(tmp_path, umask_022):
    """A file the user made private (0600) stays private when a tool rewrites it."""
    path = tmp_path / "README.md"
    path.write_text("old\n")
    path.chmod(0o600)
    safe_io.write_text(path, "new\n")
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_new_file_honours_the_umask(tmp_path):
    """A new file is 0644 less the user's umask (0077: readable by its owner alone)."""
    old = os.umask(0o077)
    try:
        safe_io.write_text(tmp_path / "new.md", "x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o600


def test_an_unwritable_output_folder_is_refused():
    """/proc/self exists and is a folder no one can create files in (root included)."""
    assert refused(safe_io.make_dir, "/proc/self") == "/proc/self: the folder is not writable"


def _fail(error):
    def fail(*args, **kwargs):
        raise error
    return fail


@pytest.mark.parametrize("error, raised", [(OSError(28, "No space left on device"), safe_io.UnsafePath),
                                           (KeyboardInterrupt(), KeyboardInterrupt)])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, error, raised):
    """A full disk or a Ctrl-C before the rename: the target as it was, no `.name.*.tmp` beside it."""
    path = tmp_path / "README.md"
    path.write_text("old\n")
    monkeypatch.setattr(safe_io.os, "replace", _fail(error))
    with pytest.raises(raised) as e:
        safe_io.write_text(path, "new\n")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"] and path.read_text() == "old\n"
    if raised is safe_io.UnsafePath:
        assert str(e.value) == f"{path}: cannot write: No space left on device"


# ---- appending


def test_appending_through_a_link_is_refused(tmp_path):
    """The history store as a link: refused, the file it points to untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    (tmp_path / "store.jsonl").symlink_to(victim)
    assert "is a symbolic link, refused for appending" in refused(safe_io.append_text, tmp_path / "store.jsonl", "x\n")
    assert victim.read_text() == "not yours\n"


def test_appending_to_a_device_is_refused():
    """Only a regular file is appended to."""
    assert refused(safe_io.append_text, "/dev/null", "x\n") == "/dev/null: not a regular file, refused"


def test_an_append_is_completed_across_short_writes(tmp_path, monkeypatch):
    """os.write may write part of the data: the rest is written too."""
    path = tmp_path / "store.jsonl"
    path.write_text("a\n")
    real = os.write
    monkeypatch.setattr(safe_io.os, "write", lambda fd, data: real(fd, data[:3]))
    safe_io.append_text(path, "0123456789\n")
    assert path.read_text() == "a\n0123456789\n"


def test_an_append_that_fails_half_way_is_cut_back(tmp_path, monkeypatch):
    """A full disk after part of a line: the file is as it was, not a torn last line."""
    path = tmp_path / "store.jsonl"
    path.write_text("a\n")
    real, calls = os.write, []

    def write(fd, data):
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real(fd, data[:4])

    monkeypatch.setattr(safe_io.os, "write", write)
    message = refused(safe_io.append_text, path, "0123456789\n")
    assert message == f"{path}: cannot append (No space left on device); the file is as it was"
    monkeypatch.undo()
    assert path.read_text() == "a\n"


def test_an_append_over_the_file_size_limit_fails_in_one_line(tmp_path):
    """Under `ulimit -f` the append fails with EFBIG and a message instead of killing the tool (SIGXFSZ)."""
    import subprocess
    code = ("import resource, sys\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from suitereport import safe_io\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "try:\n"
            "    safe_io.append_text(sys.argv[2], 'x' * 10000)\n"
            "except safe_io.UnsafePath as e:\n"
            "    print(e)\n")
    path = tmp_path / "store.jsonl"
    path.write_text("a\n")
    r = subprocess.run([sys.executable, "-c", code, str(SCRIPTS), str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, (r.returncode, r.stderr)  # -25: killed by SIGXFSZ
    assert r.stdout.strip() == f"{path}: cannot append (File too large); the file is as it was"
    assert path.read_text() == "a\n"
