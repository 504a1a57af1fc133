#!/usr/bin/env python3
"""Fails when a source file includes a header from a folder its own folder does not build on.

usage: check_layers.py LAYERS_FILE SRC_DIR

LAYERS_FILE is written by CMake (build/layers.txt), one line per folder: `folder: dep dep ...`,
the same dependencies the folder's library links. Dependencies are transitive: a folder may
include from any folder below it. Tests (`*_test.cc`) follow the same rule as their folder.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)


def read_layers(path):
    direct = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if ":" not in line:
            continue
        folder, deps = line.split(":", 1)
        direct[folder.strip()] = deps.split()
    allowed = {}

    def below(folder, seen=()):
        if folder in seen:
            raise SystemExit(f"layers: a cycle through {folder}")
        result = set()
        for dep in direct.get(folder, []):
            result.add(dep)
            result |= below(dep, seen + (folder,))
        return result

    for folder in direct:
        allowed[folder] = below(folder) | {folder}
    return allowed


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    allowed = read_layers(sys.argv[1])
    src = pathlib.Path(sys.argv[2])
    problems = []
    checked = 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".h", ".cc", ".cu"}:
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in allowed:
            problems.append(f"{path}: folder '{folder}' is not in the layers table")
            continue
        checked += 1
        for match in INCLUDE.finditer(path.read_text()):
            target = match.group(1)
            if target not in allowed[folder]:
                line = path.read_text()[: match.start()].count("\n") + 1
                problems.append(f"{path}:{line}: {folder}/ includes {target}/, which is not below it")
    for problem in problems:
        print(problem)
    print(f"{checked} files checked, {len(problems)} include(s) against the layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
