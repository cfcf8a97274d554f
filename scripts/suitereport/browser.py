"""Headless chromium, for the dashboard's screenshot and its test: the flags that keep it off the
network and out of the user's profile (a fresh --user-data-dir each time)."""

import shutil
import subprocess
import tempfile

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run")


def find():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run(url, *args, timeout=90):
    """Runs chromium on url with the extra args in a fresh profile; CompletedProcess (text)."""
    exe = find()
    if not exe:
        raise FileNotFoundError("chromium is not installed (scripts/deps/reports.txt lists it)")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args, url], capture_output=True,
                              text=True, timeout=timeout)
