"""Throwaway git repositories for the tests of the history tools: each commit is given as the files it writes."""

import subprocess


class ThrowawayRepo:
    """A new git repository at `path` (branch main, its own committer); `commit()` appends to `commits`."""

    def __init__(self, path):
        self.path = path
        self.commits = []
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        # in the repository's own config, so that the tools under test commit alike wherever HOME points
        self.git("config", "user.name", "t")
        self.git("config", "user.email", "t@t")

    def git(self, *args):
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    def commit(self, subject, files):
        """Writes {path: text} (None removes the file), commits everything with that subject; its hash."""
        for name, text in files.items():
            file = self.path / name
            if text is None:
                file.unlink()
            else:
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", subject)
        self.commits.append(self.git("rev-parse", "HEAD"))
        return self.commits[-1]
