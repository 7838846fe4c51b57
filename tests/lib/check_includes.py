#!/usr/bin/python3
"""check_includes.py ROOT [--probe FILE HEADER]...: the include boundaries of
docs/architecture.md ("Include boundaries"), checked over every C source and header of the
product (common/, analyzer/, render/, tracepoints/, samples/, bench/; tests/ may include
anything). A module is a source directory. A file may include any header of its own module;
a header of another module only when the table lists it as that module's public header and
lists the includer's module among those that may include it. Every other header is private
to its module (model_internal.h, detect_internal.h, ...), however it is named and whatever
path reaches it (`../model/x.h` included). An include that names no file of the tree is a
system header, or fails to compile anyway.

The build runs this (target po_include_check, part of `all`), so a crossing fails the
build. --probe FILE HEADER adds `#include "HEADER"` to FILE (a path under ROOT) for this
check only: unit.includes.probes passes each forbidden include of the architecture as a
probe and expects the check to refuse it. Exit 0 when every include is allowed, 1 with one
line per crossing, 2 on a bad table."""

import os
import re
import sys

SOURCE_DIRS = ("common", "analyzer", "render", "tracepoints", "samples", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
BEGIN, END = "<!-- include-boundaries:begin -->", "<!-- include-boundaries:end -->"


def read_table(root):
    """{header path: set of modules that may include it} from docs/architecture.md."""
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit("check_includes: docs/architecture.md has no include-boundaries table")
    allowed = {}
    for line in text[text.index(BEGIN):text.index(END)].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        headers = re.findall(r"`([^`]+)`", cells[0])
        users = re.findall(r"`([^`]+)`", cells[1])
        for header in headers:
            if not os.path.isfile(os.path.join(root, header)):
                print(f"check_includes: the table names {header}, which does not exist",
                      file=sys.stderr)
                sys.exit(2)
            allowed[header] = set(users)
    return allowed


def sources(root):
    found = []
    for top in SOURCE_DIRS:
        for directory, _, names in os.walk(os.path.join(root, top)):
            found += [os.path.relpath(os.path.join(directory, n), root) for n in names
                      if n.endswith((".c", ".h"))]
    return sorted(found)


def resolver(files):
    """How the compilers find a quoted include: beside the includer, then from the include
    directories (the tree's root, analyzer/, each module's own); a bare name that only one
    file of the tree has is that file."""
    present = set(files)
    by_name = {}
    for path in files:
        by_name.setdefault(os.path.basename(path), []).append(path)

    def resolve(includer, name):
        for candidate in (os.path.join(os.path.dirname(includer), name), name,
                          os.path.join("analyzer", name)):
            candidate = os.path.normpath(candidate)
            if candidate in present:
                return candidate
        matches = by_name.get(os.path.basename(name), [])
        return matches[0] if len(matches) == 1 and "/" not in name else None
    return resolve


def allowed_for(module, users):
    """A module may include a public header when the table lists it, or `DIR/*` for a
    directory that holds it, or `*`."""
    return any(u == "*" or module == u or
               (u.endswith("/*") and (module == u[:-2] or module.startswith(u[:-1])))
               for u in users)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__.splitlines()[0])
    root, probes = args[0], []
    rest = args[1:]
    while rest:
        if rest[0] != "--probe" or len(rest) < 3:
            sys.exit(__doc__.splitlines()[0])
        probes.append((rest[1], rest[2]))
        rest = rest[3:]
    allowed = read_table(root)
    files = sources(root)
    resolve = resolver(files)
    crossings = []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            names = [m.group(1) for m in map(INCLUDE.match, f) if m]
        names += [header for file, header in probes if file == path]
        module = os.path.dirname(path)
        for name in names:
            target = resolve(path, name)
            if target is None or os.path.dirname(target) == module:
                continue
            if target not in allowed:
                crossings.append(f"{path}: includes {target}, private to "
                                 f"{os.path.dirname(target)}/")
            elif not allowed_for(module, allowed[target]):
                crossings.append(f"{path}: includes {target}, which {module}/ may not "
                                 f"(docs/architecture.md, include boundaries)")
    for line in crossings:
        print(line)
    return 1 if crossings else 0


if __name__ == "__main__":
    sys.exit(main())
