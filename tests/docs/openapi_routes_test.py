#!/usr/bin/env python3
"""Fails when docs/openapi.yaml and the routes the server registers disagree.

usage: openapi_routes_test.py [REPO_ROOT]     (default: the checkout this file is in)

Reads every `router.add("METHOD", "pattern"` and `R"(pattern)"` in src/serve/api.cc (and each
`router.add_exact` with a literal path), turns each pattern into its OpenAPI form by shape (every
capture group, "(.+)" or "([^/]+)", becomes a parameter; "{id}" and "{stage}" alike count as one),
and compares them with the operations under docs/openapi.yaml's `paths:`. It fails, naming each:
- a route with no documented operation;
- a documented /api/ operation no route answers (the page's own files are registered from the web/
  folder at start-up, so paths outside /api/ are not checked this way);
- an operation without `x-roles`, or with a role outside anyone, learner, ta, instructor, admin;
- a line of the file that a YAML reader would read otherwise than its writer meant (check_layout).

Debian has no PyYAML by default, so the file is read by a line scanner written for its layout
(top-level keys at column 0, paths at 2, methods at 4, an operation's keys at 6; one-line flow
collections; block scalars after `|`). When PyYAML happens to be installed, the file is parsed by it
as well and both readings must agree. Only the standard library is needed.
"""
import pathlib
import re
import sys

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
ROLES = {"anyone", "learner", "ta", "instructor", "admin"}

# router.add("GET", "/api/health", ...) and router.add("GET", R"(/api/jobs/([^/]+))", ...), a call
# possibly broken over lines; add_exact("GET", file.url, ...) has no literal path and is skipped.
ROUTE = re.compile(
    r'router\.add(?P<exact>_exact)?\(\s*"(?P<method>[A-Z]+)"\s*,\s*'
    r'(?:R"\((?P<raw>.*?)\)"|"(?P<plain>(?:[^"\\]|\\.)*)")',
    re.S)
CAPTURE = re.compile(r"\((?:[^()\\]|\\.)*\)")
REGEX_LEFT = re.compile(r"[\\^$.|?*+()\[\]]")
TEMPLATE = re.compile(r"\{[^{}/]*\}")
BLOCK_SCALAR = re.compile(r":\s*[|>][-+0-9]*\s*$")


# ---- The routes

def read_routes(api_cc):
    """[(METHOD, shape, pattern as written, line)] of every route registered in api.cc."""
    text = api_cc.read_text()
    routes, problems = [], []
    for found in ROUTE.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        pattern = found["raw"] if found["raw"] is not None else found["plain"]
        if found["exact"]:
            shape = pattern  # a literal path
        else:
            shape = CAPTURE.sub("{}", pattern)
            if REGEX_LEFT.search(shape):
                problems.append(f"{api_cc.name}:{line}: cannot turn {pattern!r} into a path "
                                f"(only capture groups are understood); teach this check its form")
                continue
        routes.append((found["method"], shape, pattern, line))
    return routes, problems


def shape_of(path):
    """A documented path with its parameters' names left out: /api/classes/{id} -> /api/classes/{}."""
    return TEMPLATE.sub("{}", path)


# ---- Reading the YAML

def end_of_quoted(text, start):
    """The index after the quoted string opening at text[start], or -1 when it never closes."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if quote == '"' and text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            if quote == "'" and text[i + 1:i + 2] == "'":  # '' is one quote inside '...'
                i += 2
                continue
            return i + 1
        i += 1
    return -1


def plain_problem(value):
    """Why a plain (unquoted) scalar would not read as the text it looks like, or None."""
    if value[:1] in set("`@%*&!|>"):
        return f"a plain value may not start with {value[0]!r}: quote it"
    if ": " in value or value.endswith(":"):
        return "a plain value holds ': ', which starts a mapping: quote it"
    if " #" in value:
        return "a plain value holds ' #', which starts a comment: quote it"
    return None


def flow_problems(text, start=0):
    """Reads the one-line flow collection opening at text[start] ("{a: 1, b: [x, y]}").

    Returns (the index after it, problems). In a flow mapping every item must be `key: value`: an
    unquoted comma inside a description makes the rest of it a key without a value, silently."""
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    problems, items, item = [], [], ""
    i = start + 1
    while True:
        if i >= len(text):
            return i, problems + [f"'{opener}' is never closed on its line"]
        c = text[i]
        # A quote opens a quoted scalar only where a scalar starts: "it's" is plain text.
        if c in "\"'" and re.search(r"(^|:)\s*$", item):
            end = end_of_quoted(text, i)
            if end < 0:
                return len(text), problems + ["a quote is never closed"]
            item += "Q"  # a quoted scalar: whatever it holds is text
            i = end
        elif c in "{[":
            i, inner = flow_problems(text, i)
            problems += inner
            item += "F"
        elif c in "}]":
            if c != closer:
                problems.append(f"'{c}' closes a '{opener}'")
            items.append(item)
            i += 1
            break
        elif c == ",":
            items.append(item)
            item = ""
            i += 1
        else:
            item += c
            i += 1
    if opener == "{":
        for entry in (e.strip() for e in items):
            if not entry:
                continue
            pair = re.fullmatch(r"([^:\s][^:]*?|Q):(?:\s+(.*))?", entry)
            if not pair:
                problems.append(f"'{entry}' in a flow mapping has no value: a text holding a comma "
                                f"must be quoted")
            elif pair[2] and pair[2] not in ("Q", "F"):
                if problem := plain_problem(pair[2]):
                    problems.append(f"'{entry}': {problem}")
    return i, problems


def value_problems(value):
    """Problems of the value of one block-level line (after `key: ` or `- `)."""
    if value[0] in "{[":
        end, problems = flow_problems(value)
        if value[end:].strip():
            problems.append(f"text after the flow collection: {value[end:].strip()!r}")
        return problems
    if value[0] in "\"'":
        end = end_of_quoted(value, 0)
        if end < 0:
            return ["a quote is never closed on its line"]
        if value[end:].strip():
            return [f"text after the quoted value: {value[end:].strip()!r}"]
        return []
    problem = plain_problem(value)
    return [problem] if problem else []


def split_line(text):
    """A stripped line as (dash, key, value): dash is the `- ` before a sequence item ("" when none),
    key None for an item that is not `key: value`, value "" when the key opens a nested block."""
    dash = ""
    if text == "-" or text.startswith("- "):
        rest = text[1:].lstrip()
        dash, text = text[:len(text) - len(rest)], rest
    if text[:1] in "\"'":
        end = end_of_quoted(text, 0)
        if end > 0 and re.match(r":(\s|$)", text[end:]):
            return dash, text[:end], text[end + 1:].strip()
        return dash, None, text
    if text[:1] in "{[":
        return dash, None, text
    pair = re.match(r"([^\s:#][^:]*?):(?:\s+|$)(.*)", text)
    if pair:
        return dash, pair[1], pair[2].strip()
    return dash, None, text


def structural_lines(lines):
    """(number, line, stripped, indent) of every line that is not blank, a comment, or the text of a
    block scalar (the lines under `key: |` deeper than the key)."""
    block_indent = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        if not stripped or stripped.startswith("#"):
            continue
        if BLOCK_SCALAR.search(line):
            block_indent = indent
        yield number, line, stripped, indent


def check_layout(lines):
    """The file's layout, as far as a reader needs it to be well formed: spaces in steps of two,
    never deeper than what the line before opened, each line a `key: value` or a `- item`, and
    every value reading as the text it looks like."""
    problems = []
    deepest = 0  # the deepest indentation the line before allows
    for number, line, stripped, indent in structural_lines(lines):
        where = f"docs/openapi.yaml:{number}"
        if line[:len(line) - len(line.lstrip())].count("\t"):
            problems.append(f"{where}: a tab in the indentation")
            continue
        if indent % 2:
            problems.append(f"{where}: indented by {indent}, not a multiple of two")
        if indent > deepest:
            problems.append(f"{where}: indented to {indent}, deeper than the line before allows ({deepest})")
        dash, key, value = split_line(stripped)
        content = indent + len(dash)
        if key is None and not dash:
            problems.append(f"{where}: neither `key: value` nor `- item`")
        elif value and not re.fullmatch(r"[|>][-+0-9]*", value):
            problems += [f"{where}: {problem}" for problem in value_problems(value)]
        # A key without a value opens a block two deeper; a sequence item's mapping goes on at its
        # content column; anything else is done.
        deepest = content + 2 if key is not None and not value else content
    return problems


def read_operations(lines):
    """{(METHOD, path): (roles or None, line)} under `paths:`, and the problems met reading them."""
    operations, problems = {}, []
    in_paths, path, operation = False, None, None
    seen_paths = {}
    for number, line, stripped, indent in structural_lines(lines):
        where = f"docs/openapi.yaml:{number}"
        key = stripped.split(":", 1)[0].strip("'\"")
        if indent == 0:
            in_paths, path, operation = key == "paths", None, None
            continue
        if not in_paths:
            continue
        if indent == 2:
            operation = None
            if not key.startswith("/"):
                problems.append(f"{where}: {key!r} under paths: is not a path")
                path = None
                continue
            if key in seen_paths:
                problems.append(f"{where}: {key} is written twice (also line {seen_paths[key]}); a "
                                f"YAML reader keeps only the last")
            seen_paths[key] = number
            path = key
        elif indent == 4 and path:
            operation = None
            if key in METHODS:
                operation = (key.upper(), path)
                if operation in operations:
                    problems.append(f"{where}: {key} {path} is written twice")
                operations[operation] = (None, number)
        elif indent == 6 and operation and key == "x-roles":
            value = stripped.split(":", 1)[1].strip()
            listed = re.fullmatch(r"\[(.*)\]", value)
            roles = [r.strip() for r in listed[1].split(",") if r.strip()] if listed else None
            if roles is None:
                problems.append(f"{where}: x-roles is written as a one-line list: [learner, admin]")
                roles = []
            operations[operation] = (roles, operations[operation][1])
    return operations, problems


def parsed_by_pyyaml(path):
    """({(METHOD, path): roles} as PyYAML reads the file, or None when PyYAML is not installed;
    PyYAML's complaint, or None)."""
    try:
        import yaml  # optional: python3-yaml
    except ImportError:
        return None, None
    try:
        document = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        return None, " ".join(str(error).split())
    return {(method.upper(), p): operation.get("x-roles")
            for p, item in (document.get("paths") or {}).items()
            for method, operation in item.items() if method in METHODS}, None


# ---- The check

def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    api_cc = root / "src/serve/api.cc"
    openapi = root / "docs/openapi.yaml"
    failures = []

    routes, route_problems = read_routes(api_cc)
    failures += route_problems
    if len([r for r in routes if r[1].startswith("/api/")]) < 10:
        failures.append(f"{api_cc}: found only {len(routes)} routes; has register_routes moved? "
                        f"(this check reads router.add(\"METHOD\", \"pattern\" calls)")

    lines = openapi.read_text().splitlines()
    failures += check_layout(lines)
    operations, read_problems = read_operations(lines)
    failures += read_problems

    documented = {}
    for (method, path), (roles, line) in operations.items():
        documented.setdefault((method, shape_of(path)), []).append((path, line))
    registered = {(method, shape) for method, shape, _, _ in routes}

    for method, shape, pattern, line in routes:
        if (method, shape) not in documented:
            failures.append(f"src/serve/api.cc:{line}: {method} {pattern} has no operation in "
                            f"docs/openapi.yaml (looked for {method} {shape}, any parameter names)")
    for (method, shape), places in sorted(documented.items()):
        if len(places) > 1:
            failures.append(f"docs/openapi.yaml: {method} {shape} is documented "
                            f"{len(places)} times: " + ", ".join(f"{p} (line {l})" for p, l in places))
        if shape.startswith("/api/") and (method, shape) not in registered:
            for path, line in places:
                failures.append(f"docs/openapi.yaml:{line}: {method} {path} is documented, but "
                                f"src/serve/api.cc registers no such route")
    for (method, path), (roles, line) in sorted(operations.items(), key=lambda item: item[1][1]):
        if roles is None:
            failures.append(f"docs/openapi.yaml:{line}: {method} {path} has no x-roles (who may call "
                            f"it: some of {', '.join(sorted(ROLES))})")
        elif not roles:
            failures.append(f"docs/openapi.yaml:{line}: {method} {path} has an empty x-roles")
        else:
            unknown = [r for r in roles if r not in ROLES]
            if unknown:
                failures.append(f"docs/openapi.yaml:{line}: {method} {path}: x-roles names "
                                f"{', '.join(unknown)}, not among {', '.join(sorted(ROLES))}")
            if len(set(roles)) != len(roles):
                failures.append(f"docs/openapi.yaml:{line}: {method} {path}: x-roles names a role twice")

    by_pyyaml, complaint = parsed_by_pyyaml(openapi)
    if complaint:
        failures.append(f"docs/openapi.yaml: PyYAML cannot read it: {complaint}")
    if by_pyyaml is not None:
        scanned = {key: roles for key, (roles, _) in operations.items()}
        if by_pyyaml != scanned:
            for key in sorted(set(by_pyyaml) | set(scanned)):
                if by_pyyaml.get(key, "absent") != scanned.get(key, "absent"):
                    failures.append(f"docs/openapi.yaml: {key[0]} {key[1]}: PyYAML reads x-roles "
                                    f"{by_pyyaml.get(key, 'absent')}, this check's scanner "
                                    f"{scanned.get(key, 'absent')}; one of them misreads the file")

    if failures:
        for failure in failures:
            print(f"FAIL {failure}")
        print(f"{len(failures)} problem{'s' if len(failures) != 1 else ''}: docs/openapi.yaml and "
              f"src/serve/api.cc disagree (document the route, with x-roles, or remove the entry)")
        return 1
    print(f"ok: {len(routes)} routes of src/serve/api.cc, each documented; "
          f"{len(operations)} operations in docs/openapi.yaml, each with x-roles"
          + ("; PyYAML reads the same" if by_pyyaml is not None else "; PyYAML is not installed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
