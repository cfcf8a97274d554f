"""Every file the report tools read or write goes through here.

Reading: only regular files (a device, a FIFO or a socket is refused at once: /dev/zero would be read
until memory runs out, a FIFO blocks forever), at most MAX_INPUT_BYTES, so one line can say what is
wrong. Writing: a temporary file that no other user can have planted (mkstemp beside the target: a
random name, O_EXCL, mode 0600 then the target's mode), flushed, then renamed over the target, so a
reader sees the old file or the new one and never half of one. Appending: all or nothing, the file is
truncated back to its old size on any error (a full disk, `ulimit -f`).
"""

import contextlib
import errno
import os
import signal
import stat
import tempfile
from pathlib import Path

MAX_INPUT_BYTES = 256 * 1024 * 1024  # a report of 10^6 samples is ~20 MB; the store grows ~10 KB a report

# (device, inode) of every file read since the tool started (cli.run empties it): write_bytes refuses to
# replace one, so that `history html --store S --out S` cannot turn the history into a web page.
_read = set()


def forget_inputs():
    _read.clear()


class UnsafePath(Exception):
    """Bad input or an unwritable target: one line (callers turn it into their own error type)."""


def _why(e):
    return os.strerror(e.errno) if getattr(e, "errno", None) else str(e)


def check_input(path, what="file", limit=None):
    """Raises UnsafePath unless `path` is a regular file of at most `limit` bytes (symlinks followed;
    default MAX_INPUT_BYTES, read at the call so that a test can lower it)."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UnsafePath(f"{path}: no such {what}") from None
    except OSError as e:
        raise UnsafePath(f"{path}: cannot read: {_why(e)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path}: is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePath(f"{path}: not a regular file (a device, FIFO or socket), refused")
    if st.st_size > limit:
        raise UnsafePath(f"{path}: {st.st_size} bytes, over the {limit // (1024 * 1024)} MiB these tools read")
    return st


def read_bytes(path, what="file", limit=None):
    """The contents of a regular file, never more than `limit` bytes (a file growing while read too)."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    check_input(path, what, limit)
    try:
        # O_NONBLOCK: a FIFO swapped in after the check must not block the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise UnsafePath(f"{path}: cannot read: {_why(e)}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{path}: not a regular file (a device, FIFO or socket), refused")
        _read.add((st.st_dev, st.st_ino))
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnsafePath(f"{path}: over the {limit // (1024 * 1024)} MiB these tools read")
    return data


def read_text(path, what="file", limit=None):
    try:
        return read_bytes(path, what, limit).decode("utf-8")
    except UnicodeDecodeError as e:
        raise UnsafePath(f"{path}: not UTF-8 text (byte {e.start})") from None


def _kinds(path, failed):
    """(is a link, exists, is a folder) of path; an OSError of those questions is UnsafePath `failed: why`
    (Python 3.11's is_symlink raises on a name over 255 bytes, ENAMETOOLONG)."""
    try:
        return path.is_symlink(), path.exists(), path.is_dir()
    except OSError as e:
        raise UnsafePath(f"{failed}: {_why(e)}") from None


def refuse_link_or_folder(path, shown=None):
    """Raises UnsafePath where a file is to be written over a link or a folder (named as `shown`, else as
    given). A link is refused, not replaced nor followed: replacing it would silently cut the user's link,
    following it would write wherever it points (a dangling one: a file of its choosing)."""
    name = path if shown is None else shown
    link, exists, folder = _kinds(path, f"{name}: cannot be written")
    if link:
        what = "a dangling symbolic link" if not exists else "a symbolic link"
        raise UnsafePath(f"{name}: is {what}, refused as an output (name the file itself)")
    if folder:
        raise UnsafePath(f"{name}: is a folder, not a file to write")


def _target_dir(path):
    if str(path) == "":  # Path("") is ".": check the text the user gave
        raise UnsafePath("an empty output path")
    path = Path(path)
    if str(path) == ".":
        raise UnsafePath("an empty output path")
    parent = path.parent
    name_bytes = len(os.fsencode(path.name))
    if name_bytes > 255:
        raise UnsafePath(f"{path}: file name too long ({name_bytes} bytes, at most 255)")
    refuse_link_or_folder(path)
    if not parent.is_dir():
        raise UnsafePath(f"{path}: the folder {parent} does not exist")
    return parent


def check_output(path):
    """Raises UnsafePath where write_bytes(path) cannot succeed, so that a tool says so before its work:
    an empty name, a folder, a link, a missing or unwritable folder, a name over 255 bytes."""
    parent = _target_dir(path)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UnsafePath(f"{path}: the folder {parent} is not writable")
    return parent


def make_dir(path, what="output folder"):
    """Creates the folder `path` (and its parents) if missing; UnsafePath in one line if it cannot be
    one: an existing file, a dangling link, an unwritable parent, an empty name."""
    if str(path) == "":
        raise UnsafePath(f"an empty {what} path")
    path = Path(path)
    link, exists, folder = _kinds(path, f"{path}: cannot be a folder")
    if link and not exists:
        raise UnsafePath(f"{path}: is a dangling symbolic link, not a folder")
    if exists and not folder:
        raise UnsafePath(f"{path}: is a file, not a folder (the {what})")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UnsafePath(f"{path}: cannot create the folder: {_why(e)}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UnsafePath(f"{path}: the folder is not writable")
    return path


@contextlib.contextmanager
def _no_sigxfsz():
    """A file over `ulimit -f` kills the process with SIGXFSZ unless it is ignored; ignored, the write
    fails with EFBIG, which the callers clean up after."""
    try:
        old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    except (ValueError, AttributeError):  # not the main thread, or no such signal here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGXFSZ, old)


def write_bytes(path, data, mode=0o644, replaces_input=False):
    """Replaces `path` with `data` atomically; no file but `path` is ever written or followed. A file this
    tool has read is an input and is not replaced, unless `replaces_input` says that this is an edit of
    it (the README's generated blocks, the history store's rewrite)."""
    parent = _target_dir(path)
    path = Path(path)
    try:
        st = os.stat(path)
        mode = stat.S_IMODE(st.st_mode)  # keep an existing file's permissions
        if (st.st_dev, st.st_ino) in _read and not replaces_input:
            raise UnsafePath(f"{path}: is one of this command's inputs, refused as an output (name another file)")
    except OSError:
        pass
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=parent)
    except OSError as e:
        raise UnsafePath(f"{path}: cannot write in {parent}: {_why(e)}") from None
    try:
        with _no_sigxfsz(), os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode & ~_umask())
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise UnsafePath(f"{path}: cannot write: {_why(e)}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path, text, mode=0o644, replaces_input=False):
    write_bytes(path, text.encode("utf-8"), mode, replaces_input)


def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


def append_text(path, text):
    """Appends `text` to `path` (created if missing) all or nothing: on any error the file is cut back to
    its old size and UnsafePath says why. The caller holds whatever lock the file needs."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePath(f"{path}: is a symbolic link, refused for appending") from None
        raise UnsafePath(f"{path}: cannot write: {_why(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{path}: not a regular file, refused")
        data = text.encode("utf-8")
        with _no_sigxfsz():
            try:
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
                os.fsync(fd)
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, st.st_size)
                raise UnsafePath(f"{path}: cannot append ({_why(e)}); the file is as it was") from None
    finally:
        os.close(fd)
