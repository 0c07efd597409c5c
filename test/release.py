#!/usr/bin/python3
"""The release: its files, its tarball, and the check that its versions agree.

A release holds every file of the tree except .git and what .gitignore
names (build products, .cache/, log/): read here without git, so that a
tree unpacked from a tarball, with no .git and no git installed, makes the
same release and copies itself into the tests' chroots the same way.

    python3 test/release.py files           the release's files, one a line
    python3 test/release.py tarball DIR     DIR/shard_fdw-VERSION.tar.gz, its
                                            files under shard_fdw-VERSION/
                                            (after the check); prints its path
    python3 test/release.py check           the check alone

The check fails unless one version names the release everywhere: the
default_version of shard_fdw.control, META.json's version and the version
of the extension it provides (whose file, the install script of that
version, exists), and the upstream part of the newest version in
debian/changelog.  In a git work tree, with git installed, it also fails
unless the release's files are those git lists (tracked, or untracked and
not ignored), so that .gitignore is read here as git reads it.  It prints
each problem, then "release VERSION: N problems"; the exit status is 1 when
there is any.
"""

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NAME = "shard_fdw"


class Ignored:
    """The patterns of a .gitignore of the forms this repository uses: a
    name or glob matched at any depth, a path with a slash matched from the
    top, either with a trailing slash matching directories only."""

    def __init__(self, path):
        self.patterns = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                if line.startswith("!") or "**" in line or line.endswith("\\ "):
                    sys.exit(f"{path}: pattern {line!r} is of a form test/release.py does not read")
                directory_only = line.endswith("/")
                pattern = line.rstrip("/")
                anchored = "/" in pattern
                self.patterns.append((pattern.lstrip("/"), anchored, directory_only))

    def __call__(self, relative, is_directory):
        """Whether the file or directory at relative (to the top) is ignored."""
        name = relative.rsplit("/", 1)[-1]
        for pattern, anchored, directory_only in self.patterns:
            if directory_only and not is_directory:
                continue
            if fnmatch.fnmatchcase(relative if anchored else name, pattern):
                return True
        return False


def release_files():
    """The release's files, relative to the top, sorted."""
    ignored = Ignored(os.path.join(REPO, ".gitignore"))
    found = []
    for top, directories, files in os.walk(REPO):
        relative_top = os.path.relpath(top, REPO)
        prefix = "" if relative_top == "." else relative_top + "/"
        directories[:] = [d for d in directories
                          if d != ".git" and not ignored(prefix + d, True)]
        found += [prefix + f for f in files
                  if not (prefix == "" and f == ".git") and not ignored(prefix + f, False)]
    return sorted(found)


def control_version():
    """default_version of shard_fdw.control."""
    with open(os.path.join(REPO, f"{NAME}.control"), encoding="utf-8") as control:
        match = re.search(r"^default_version\s*=\s*'([^']+)'", control.read(), re.M)
    return match.group(1) if match else None


def changelog_version():
    """The upstream part of the newest version in debian/changelog: the
    version less its epoch and Debian revision."""
    with open(os.path.join(REPO, "debian", "changelog"), encoding="utf-8") as changelog:
        match = re.match(r"\S+ \((?:\d+:)?([^)]+?)(?:-[^-)]+)?\)", changelog.readline())
    return match.group(1) if match else None


def git_files():
    """The files git lists in REPO (tracked, or untracked and not
    ignored), or None without git or outside a work tree."""
    if shutil.which("git") is None or not os.path.exists(os.path.join(REPO, ".git")):
        return None
    listed = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, check=False)
    if listed.returncode != 0:
        return None
    return sorted(name for name in listed.stdout.decode().split("\0")
                  if name and os.path.lexists(os.path.join(REPO, name)))


def problems():
    """What keeps the tree from being a release, as messages; and its version."""
    found = []
    version = control_version()
    if version is None:
        return [f"{NAME}.control has no default_version"], None
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        found.append(f"default_version '{version}' is not MAJOR.MINOR.PATCH")
    with open(os.path.join(REPO, "META.json"), encoding="utf-8") as f:
        meta = json.load(f)
    provided = meta.get("provides", {}).get(NAME, {})
    for where, value in (("META.json's version", meta.get("version")),
                         (f"META.json's provides.{NAME}.version", provided.get("version")),
                         ("debian/changelog's newest version", changelog_version())):
        if value != version:
            found.append(f"{where} is {value!r}, not {version!r} as {NAME}.control says")
    script = f"{NAME}--{version}.sql"
    if provided.get("file") != script:
        found.append(f"META.json's provides.{NAME}.file is {provided.get('file')!r}, not {script!r}")
    if not os.path.exists(os.path.join(REPO, script)):
        found.append(f"{script}, the install script of version {version}, is missing")
    listed = git_files()
    if listed is not None:
        ours = release_files()
        for name in sorted(set(listed) - set(ours)):
            found.append(f"{name}: git lists it, the release leaves it out")
        for name in sorted(set(ours) - set(listed)):
            found.append(f"{name}: the release holds it, git does not list it")
    return found, version


def check():
    """Print the problems; the version, or exit 1 when there is any."""
    found, version = problems()
    for problem in found:
        print(problem)
    print(f"release {version}: {len(found)} problems")
    if found:
        sys.exit(1)
    return version


def tarball(directory):
    """Write the release tarball into directory; its path."""
    version = check()
    prefix = f"{NAME}-{version}"
    path = os.path.join(os.path.abspath(directory), f"{prefix}.tar.gz")

    def owned_by_root(info):
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(path + ".tmp", "w:gz") as archive:
        for name in release_files():
            archive.add(os.path.join(REPO, name), arcname=f"{prefix}/{name}",
                        recursive=False, filter=owned_by_root)
    os.replace(path + ".tmp", path)
    return path


def main(argv):
    if argv[:1] == ["files"] and len(argv) == 1:
        print("\n".join(release_files()))
    elif argv[:1] == ["tarball"] and len(argv) == 2:
        print(tarball(argv[1]))
    elif argv == ["check"]:
        check()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
