"""Headless chromium, for the dashboard's screenshot and its test: the flags that keep it off the
network and out of the user's profile (a fresh --user-data-dir each time).

A `--screenshot=PATH` argument is checked first (its folder must exist: chromium said nothing and
exited 0 when it did not, and the tool reported "chromium failed (exit 0)"), and chromium writes the
picture inside its temporary profile; it is then written to PATH by safe_io (no link at PATH is
followed, no half file is left)."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import safe_io

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run")
SCREENSHOT = "--screenshot="


def find():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run(url, *args, timeout=90):
    """Runs chromium on url with the extra args in a fresh profile; CompletedProcess (text). Raises
    FileNotFoundError (one line) for a screenshot into a folder that is missing or not writable, or
    when chromium is not installed."""
    shot = next((a[len(SCREENSHOT):] for a in args if a.startswith(SCREENSHOT)), None)
    if shot is not None:
        try:
            safe_io.check_output(shot)
        except safe_io.UnsafePath as e:
            raise FileNotFoundError(str(e)) from None
    exe = find()
    if not exe:
        raise FileNotFoundError("chromium is not installed (scripts/deps/reports.txt lists it)")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        inner = os.path.join(profile, "screenshot.png")
        args = [SCREENSHOT + inner if a.startswith(SCREENSHOT) else a for a in args]
        r = subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args, url], capture_output=True,
                           text=True, timeout=timeout)
        if shot is not None and r.returncode == 0:
            if not os.path.isfile(inner):
                r.returncode = 1
                r.stderr += f"\nchromium wrote no screenshot ({Path(shot).name})"
            else:
                try:
                    safe_io.write_bytes(shot, safe_io.read_bytes(inner, "screenshot"))
                except safe_io.UnsafePath as e:
                    raise FileNotFoundError(str(e)) from None
        return r
