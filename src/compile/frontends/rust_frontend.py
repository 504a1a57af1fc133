#!/usr/bin/python3
"""cudojo's Rust front end: compiles a learner's Rust kernel file to PTX with Debian's rustc.

Theory of operation (PROTOCOL.md has the request and answer formats):

  The judge runs `/usr/bin/python3 -I rust_frontend.py /job/request.json` in its sandbox. This
  script is the only process besides the one rustc it starts; rustc gets a scrubbed environment,
  a fresh work folder under /tmp, `--emit asm` (no linker, no external tool) and the sysroot the
  judge built earlier with `--build-sysroot` (read-only: `core` and an empty `compiler_builtins`
  for nvptx64-nvidia-cuda). The script prints exactly one JSON object on stdout.

  1. The learner's text is scanned token by token (comments and string literals understood) and
     refused, with its line, if it names anything that would let rustc read files or the
     environment, load other crates, or change how the crate is compiled (step 2 below).
  2. The crate root is the learner's text unchanged, then, after it, lines the front end adds:
     `use cudojo::*;`, a compile-time check that the stage's kernel has the contract's parameter
     list, and `mod cudojo { <prelude> }`. Crate attributes (no_std, features) come from the
     command line (-Z crate-attr), so the learner's lines keep their own numbers in rustc's
     messages and in the PTX's `.loc` lines, and the learner writes no boilerplate.
  3. rustc's JSON diagnostics are mapped back: spans in the learner's lines keep their line and
     column; spans in the added lines become the contract's or the prelude's own messages; no
     host path reaches the learner.
  4. The PTX is tidied: every `.loc` names the innermost learner line of its inlining chain
     (rustc's -Z verbose-asm prints the chain), so a barrier or an atomic from the prelude is
     attributed to the learner's call; `.file` names lose host paths; the prelude's own lines
     get a file of their own. Then the entry, its parameters and unresolved calls are checked.

  `--build-sysroot DIR --arch sm_90` builds the sysroot into DIR atomically and is a no-op when
  DIR already holds one stamped with this rustc and arch, so the judge may call it at startup.

Failures of the learner's file are answers with "ok": false. Failures of the judge's own setup
(no rustc, a stale or unloadable sysroot, a bug here) are answers with "ok": false and
"internal": true, the reason in "log", so the caller never reports them as the learner's compile
error. Either way the exit status is 0; `--build-sysroot` exits 2 when it fails.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata

# ----------------------------------------------------------------------------------------------
# Limits and fixed facts, in one place.
# ----------------------------------------------------------------------------------------------

RUSTC = "/usr/bin/rustc"  # Debian's rustc-web: the rustup one on PATH has no nvptx core
TARGET = "nvptx64-nvidia-cuda"
EDITION = "2021"  # 2024 would refuse #[no_mangle] without unsafe(...) and warn on unsafe ops
MAX_SOURCE_BYTES = 256 * 1024
RUSTC_TIMEOUT_S = 120  # the sandbox has its own limits; this one only keeps the script finite
SYSROOT_TIMEOUT_S = 900
MAX_DIAGNOSTICS = 50
STAMP_NAME = "cudojo-sysroot.stamp"
ROOT_NAME = "cudojo_kernel.rs"  # the crate root rustc sees; the learner never sees this name
PRELUDE_DISPLAY = "cudojo_prelude.rs"
PRELUDE_MODULE = "cudojo"
# Features the crate gets from the command line; a learner's #![feature(...)] naming only these
# is accepted (and dropped), any other is refused.
FEATURES = ("abi_ptx", "stdarch_nvptx", "asm_experimental_arch", "link_llvm_intrinsics",
            "macro_attr")
# PTX-level functions the driver provides (CUDA's system calls); any other `.extern .func` is a
# call into code that does not exist on the GPU.
PTX_SYSCALLS = ("vprintf", "malloc", "free", "__assertfail")

# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------


class InternalError(Exception):
    """The judge's own setup failed (not the learner's file)."""


def emit(obj, status=0):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
    sys.exit(status)


def rustc_env(tmp):
    # Nothing from the caller's environment: no RUSTFLAGS-like knobs, no wrapper, no ICE files.
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "RUSTC_BOOTSTRAP": "1",  # -Z flags and the features on Debian's stable rustc
        "RUSTC_ICE": "0",
        "CARGO_TERM_COLOR": "never",
    }


def rustc_version(tmp):
    try:
        out = subprocess.run([RUSTC, "-vV"], capture_output=True, text=True, timeout=60,
                             env=rustc_env(tmp))
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InternalError(f"cannot run {RUSTC}: {e}")
    if out.returncode != 0:
        raise InternalError(f"{RUSTC} -vV failed: {out.stderr.strip()[:500]}")
    fields = {}
    for line in out.stdout.splitlines()[1:]:
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return out.stdout.splitlines()[0].strip(), fields


def stamp_text(version_line, arch):
    return f"{version_line}\ntarget: {TARGET}\narch: {arch}\nformat: 1\n"


def valid_arch(arch):
    return isinstance(arch, str) and re.fullmatch(r"sm_\d{2,3}[af]?", arch) is not None


def sysroot_libdir(root):
    return os.path.join(root, "lib", "rustlib", TARGET, "lib")


# ----------------------------------------------------------------------------------------------
# Mode 1: building the sysroot
# ----------------------------------------------------------------------------------------------

COMPILER_BUILTINS_SOURCE = """\
// Empty stand-in: every no_std crate links compiler_builtins, and nvptx needs none of it
// (the kernel crate is emitted as PTX, never linked).
#![no_std]
#![feature(compiler_builtins)]
#![compiler_builtins]
"""


def find_library_source(fields):
    release = fields.get("release", "")
    candidates = [f"/usr/src/rustc-{release}/library"]
    try:
        sysroot = subprocess.run([RUSTC, "--print", "sysroot"], capture_output=True, text=True,
                                 timeout=60).stdout.strip()
        candidates.append(os.path.join(sysroot, "lib/rustlib/src/rust/library"))
    except (OSError, subprocess.TimeoutExpired):
        pass
    for path in candidates:
        if os.path.isfile(os.path.join(path, "core", "src", "lib.rs")):
            return path
    raise InternalError("no Rust library source for rustc " + release +
                        " (Debian package rust-web-src puts it under /usr/src/rustc-VERSION)")


def build_sysroot_into(root, arch, library, log):
    libdir = sysroot_libdir(root)
    os.makedirs(libdir)
    scratch = os.path.join(root, ".scratch")
    os.makedirs(scratch)
    common = ["--target", TARGET, "-C", f"target-cpu={arch}", "-C", "opt-level=3",
              "-Z", "unstable-options", "-C", "panic=immediate-abort", "--cap-lints", "allow",
              "--out-dir", libdir, "--remap-path-prefix", f"{library}=rust-library"]
    steps = [
        ("core", [RUSTC, "--edition", "2024", "--crate-type", "rlib", "--crate-name", "core",
                  "-Z", "force-unstable-if-unmarked", *common,
                  os.path.join(library, "core", "src", "lib.rs")]),
    ]
    cb = os.path.join(scratch, "compiler_builtins.rs")
    with open(cb, "w") as f:
        f.write(COMPILER_BUILTINS_SOURCE)
    steps.append(("compiler_builtins",
                  [RUSTC, "--edition", "2024", "--crate-type", "rlib", "--crate-name",
                   "compiler_builtins", "--sysroot", root, *common, cb]))
    for name, cmd in steps:
        started = time.monotonic()
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=scratch,
                                 env=rustc_env(scratch), timeout=SYSROOT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise InternalError(f"building {name} took over {SYSROOT_TIMEOUT_S} s")
        if out.returncode != 0:
            raise InternalError(f"building {name} failed:\n{out.stderr[-4000:]}")
        log.append(f"built {name} in {time.monotonic() - started:.1f} s")
    shutil.rmtree(scratch)


def read_stamp(root):
    try:
        with open(os.path.join(root, STAMP_NAME)) as f:
            return f.read()
    except OSError:
        return None


def swap_in(built, target_dir, tmp):
    """Renames `built` to target_dir, moving an old one aside; False if renaming cannot work."""
    old = os.path.join(tmp, "old")
    try:
        if os.path.lexists(target_dir):
            os.rename(target_dir, old)
        os.rename(built, target_dir)
        return True
    except OSError:
        if os.path.lexists(old) and not os.path.lexists(target_dir):
            os.rename(old, target_dir)
        return False


def install_in_place(built, target_dir):
    """Moves built/lib into target_dir; the stamp goes last, so a reader trusts only a whole
    sysroot."""
    try:
        os.unlink(os.path.join(target_dir, STAMP_NAME))
    except FileNotFoundError:
        pass
    shutil.rmtree(os.path.join(target_dir, "lib"), ignore_errors=True)
    shutil.move(os.path.join(built, "lib"), os.path.join(target_dir, "lib"))
    partial = os.path.join(target_dir, STAMP_NAME + ".new")
    shutil.copyfile(os.path.join(built, STAMP_NAME), partial)
    os.rename(partial, os.path.join(target_dir, STAMP_NAME))


def build_sysroot(target_dir, arch):
    log = []
    target_dir = os.path.abspath(target_dir)
    if not valid_arch(arch):
        raise InternalError(f"--arch wants sm_XX, got {arch!r}")
    work = tempfile.mkdtemp(prefix="cudojo-rustc-")
    try:
        version_line, fields = rustc_version(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    stamp = stamp_text(version_line, arch)
    if read_stamp(target_dir) == stamp and os.path.isfile(
            os.path.join(sysroot_libdir(target_dir), "libcore.rlib")):
        return {"ok": True, "log": f"{target_dir} is up to date ({version_line}, {arch})",
                "stamp": stamp}
    library = find_library_source(fields)
    started = time.monotonic()
    parent = os.path.dirname(target_dir)
    # Beside DIR when its parent is writable (then one rename swaps it in: readers see no
    # sysroot or a whole one); inside DIR when DIR is the only writable place (a mount point).
    beside = os.access(parent, os.W_OK) and not os.path.ismount(target_dir)
    if not beside:
        os.makedirs(target_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(target_dir)}.building-",
                           dir=parent if beside else target_dir)
    try:
        built = os.path.join(tmp, "root")
        build_sysroot_into(built, arch, library, log)
        with open(os.path.join(built, STAMP_NAME), "w") as f:
            f.write(stamp)
        if read_stamp(target_dir) == stamp:
            log.append("another build finished first; kept it")
        elif not (beside and swap_in(built, target_dir, tmp)):
            install_in_place(built, target_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.append(f"sysroot for {arch} ready in {time.monotonic() - started:.1f} s ({version_line})")
    return {"ok": True, "log": "\n".join(log), "stamp": stamp}


# ----------------------------------------------------------------------------------------------
# Mode 2, step 1: a Rust lexer, just enough to see identifiers, punctuation and delimiters
# outside comments and literals.
# ----------------------------------------------------------------------------------------------


class Token:
    __slots__ = ("kind", "text", "line", "col", "start", "end", "raw")

    def __init__(self, kind, text, line, col, start, end, raw=False):
        self.kind = kind  # "ident", "lifetime", "literal", "punct"
        self.text = text  # identifiers: NFC-normalized name without r#
        self.line = line
        self.col = col
        self.start = start
        self.end = end
        self.raw = raw


class LexError(Exception):
    def __init__(self, line, col, message):
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


def is_ident_start(c):
    return c == "_" or c.isalpha() or unicodedata.category(c) in ("Lu", "Ll", "Lt", "Lm", "Lo",
                                                                  "Nl")


def is_ident_continue(c):
    return is_ident_start(c) or c.isdigit() or unicodedata.category(c) in ("Mn", "Mc", "Nd",
                                                                           "Pc")


def lex(text):
    tokens = []
    n = len(text)
    i = 0
    line = 1
    line_start = 0

    def pos(k):
        return line, k - line_start + 1

    def advance_to(k):
        # Move i to k, counting newlines in between.
        nonlocal i, line, line_start
        j = text.find("\n", i, k)
        while j != -1:
            line += 1
            line_start = j + 1
            j = text.find("\n", j + 1, k)
        i = k

    # rustc skips a first line starting with `#!` (a shebang) unless it is a `#![...]` attribute,
    # with a notion of whitespace wider than Python's: no kernel file has one, so it is refused
    # rather than skipped unscanned.
    if text.startswith("#!") and not text.startswith("#!["):
        raise LexError(1, 1, "a first line starting with `#!` is not kernel code; remove it")
    # Characters rustc reads as whitespace and Python does not (left-to-right and right-to-left
    # marks): refused, so the scan and the compiler always see the same tokens.
    for mark in ("\u200e", "\u200f"):
        at = text.find(mark)
        if at != -1:
            mark_line = text.count("\n", 0, at) + 1
            raise LexError(mark_line, at - (text.rfind("\n", 0, at) + 1) + 1,
                           "an invisible direction mark (U+200E or U+200F) is not allowed in a kernel file")

    while i < n:
        c = text[i]
        if c == "\n" or c.isspace():
            advance_to(i + 1)
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            advance_to(n if j == -1 else j)
            continue
        if text.startswith("/*", i):
            sl, sc = pos(i)
            depth = 0
            k = i
            while k < n:
                if text.startswith("/*", k):
                    depth += 1
                    k += 2
                elif text.startswith("*/", k):
                    depth -= 1
                    k += 2
                    if depth == 0:
                        break
                else:
                    k += 1
            if depth != 0:
                raise LexError(sl, sc, "this block comment is never closed (`*/` missing)")
            advance_to(k)
            continue
        sl, sc = pos(i)
        # Raw strings: r"..", r#".."#, br"..", cr#".."#
        m = re.compile(r"(?:b|c)?r(#*)\"").match(text, i)
        if m:
            hashes = m.group(1)
            close = '"' + hashes
            k = text.find(close, m.end())
            if k == -1:
                raise LexError(sl, sc, "this raw string is never closed")
            end = k + len(close)
            tokens.append(Token("literal", "", sl, sc, i, end))
            advance_to(end)
            continue
        # Strings: "..", b"..", c".."
        m = re.compile(r"(?:b|c)?\"").match(text, i)
        if m:
            k = m.end()
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            if k >= n:
                raise LexError(sl, sc, "this string is never closed (a `\"` is missing)")
            end = k + 1
            tokens.append(Token("literal", "", sl, sc, i, end))
            advance_to(end)
            continue
        # Byte chars b'x'
        if text.startswith("b'", i):
            k = i + 2
            while k < n and text[k] != "'" and text[k] != "\n":
                k += 2 if text[k] == "\\" else 1
            if k >= n or text[k] != "'":
                raise LexError(sl, sc, "this byte literal is never closed")
            tokens.append(Token("literal", "", sl, sc, i, k + 1))
            advance_to(k + 1)
            continue
        # Raw identifiers r#name
        if text.startswith("r#", i) and i + 2 < n and is_ident_start(text[i + 2]):
            k = i + 2
            while k < n and is_ident_continue(text[k]):
                k += 1
            name = unicodedata.normalize("NFC", text[i + 2:k])
            tokens.append(Token("ident", name, sl, sc, i, k, raw=True))
            advance_to(k)
            continue
        if is_ident_start(c):
            k = i + 1
            while k < n and is_ident_continue(text[k]):
                k += 1
            name = unicodedata.normalize("NFC", text[i:k])
            tokens.append(Token("ident", name, sl, sc, i, k))
            advance_to(k)
            continue
        if c.isdigit():
            k = i + 1
            while k < n:
                ch = text[k]
                if ch.isalnum() or ch == "_":
                    k += 1
                elif ch in "+-" and text[k - 1] in "eE" and not text[i:k].lower().startswith(
                        ("0x", "0b", "0o")):
                    k += 1
                elif ch == "." and k + 1 < n and text[k + 1].isdigit() and "." not in text[i:k]:
                    k += 1
                else:
                    break
            tokens.append(Token("literal", "", sl, sc, i, k))
            advance_to(k)
            continue
        if c == "'":
            # A char literal ('x', '\n', '\u{..}') or a lifetime / label ('a, 'static).
            if i + 1 < n and text[i + 1] == "\\":
                k = i + 3  # past the backslash and the character it escapes ('\\', '\'')
                while k < n and text[k] != "'" and text[k] != "\n":
                    k += 2 if text[k] == "\\" else 1
                if k >= n or text[k] != "'":
                    raise LexError(sl, sc, "this character literal is never closed")
                tokens.append(Token("literal", "", sl, sc, i, k + 1))
                advance_to(k + 1)
                continue
            if i + 2 < n and text[i + 2] == "'" and text[i + 1] != "\n":
                tokens.append(Token("literal", "", sl, sc, i, i + 3))
                advance_to(i + 3)
                continue
            k = i + 1
            if text.startswith("r#", k):
                k += 2
            while k < n and is_ident_continue(text[k]):
                k += 1
            tokens.append(Token("lifetime", text[i:k], sl, sc, i, k))
            advance_to(max(k, i + 1))
            continue
        tokens.append(Token("punct", c, sl, sc, i, i + 1))
        advance_to(i + 1)
    return tokens


# ----------------------------------------------------------------------------------------------
# Mode 2, step 2: the policy. Each refusal names the learner's line and says why.
# ----------------------------------------------------------------------------------------------

# Identifiers refused anywhere outside comments and literals (so also inside macro_rules bodies
# and macro arguments, where they could be pasted into an invocation).
REFUSED_ANYWHERE = {
    "include": "`include!` would read a file on the judge's machine; kernels get their data "
               "through their parameters",
    "include_str": "`include_str!` would read a file on the judge's machine; kernels get their "
                   "data through their parameters",
    "include_bytes": "`include_bytes!` would read a file on the judge's machine; kernels get "
                     "their data through their parameters",
    "env": "`env!` would read the judge's environment; pick another name if this is a variable",
    "option_env": "`option_env!` would read the judge's environment",
    "debugger_visualizer": "`#[debugger_visualizer]` would read a file on the judge's machine",
    "proc_macro": "procedural macros cannot be loaded here",
    "proc_macro_attribute": "procedural macros cannot be loaded here",
    "proc_macro_derive": "procedural macros cannot be loaded here",
    "long_running_const_eval": "the judge keeps rustc's limit on compile-time evaluation",
}
LINT_ATTRIBUTES = {"allow", "warn", "deny", "forbid", "expect"}
KEPT_INNER_ATTRIBUTES = LINT_ATTRIBUTES | {"doc"}
DROPPED_INNER_ATTRIBUTES = {"no_std", "no_main"}  # the front end already supplies these


class Refusal:
    def __init__(self, line, col, message):
        self.line = line
        self.col = col
        self.message = message


def matching_close(tokens, k):
    """Index of the token closing the delimiter at tokens[k] (balance already checked)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth = 0
    for j in range(k, len(tokens)):
        t = tokens[j]
        if t.kind != "punct":
            continue
        if t.text in pairs:
            depth += 1
        elif t.text in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def check_delimiters(tokens):
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for t in tokens:
        if t.kind != "punct":
            continue
        if t.text in pairs:
            stack.append(t)
        elif t.text in ")]}":
            if not stack:
                return Refusal(t.line, t.col, f"this `{t.text}` closes nothing that was opened")
            opened = stack.pop()
            if pairs[opened.text] != t.text:
                return Refusal(t.line, t.col,
                               f"this `{t.text}` does not match the `{opened.text}` opened at "
                               f"line {opened.line}, column {opened.col}")
    if stack:
        t = stack[-1]
        return Refusal(t.line, t.col, f"this `{t.text}` is never closed")
    return None


def scan_policy(tokens):
    """Returns (refusals, blank_ranges): blank_ranges are [start, end) character ranges of
    accepted attributes the front end drops (replaced by spaces, so lines keep their numbers)."""
    refusals = []
    blanks = []
    count = len(tokens)

    def refuse(t, message):
        refusals.append(Refusal(t.line, t.col, message))

    for k, t in enumerate(tokens):
        if t.kind == "ident":
            if t.text in REFUSED_ANYWHERE:
                refuse(t, f"`{t.text}` is not allowed here: {REFUSED_ANYWHERE[t.text]}")
                continue
            if t.raw:
                continue
            nxt = tokens[k + 1] if k + 1 < count else None
            if t.text == "mod":
                # Only inline modules: `mod name { ... }`. `mod name;` loads another file.
                j = k + 1
                if j < count and tokens[j].kind == "punct" and tokens[j].text == "$":
                    j += 1
                ok = (j < count and tokens[j].kind == "ident" and j + 1 < count
                      and tokens[j + 1].kind == "punct" and tokens[j + 1].text == "{")
                if not ok:
                    refuse(t, "`mod name;` would load another file; write the module inline "
                              "instead: `mod name { ... }`")
            elif t.text == "extern":
                if nxt is not None and nxt.kind == "ident" and nxt.text == "crate":
                    refuse(t, "`extern crate` is not available: kernels use `core` only, and it "
                              "is already there (write `core::...`)")
                elif not (nxt is not None and (nxt.kind == "literal" or (
                        nxt.kind == "ident" and nxt.text == "fn") or (
                        nxt.kind == "punct" and nxt.text == "{"))):
                    refuse(t, "`extern` must be followed by an ABI string such as "
                              "\"ptx-kernel\" or \"C\", by `fn` or by `{`")
        elif t.kind == "punct" and t.text == "#":
            # Attributes: `#[...]` and `#![...]`, with any whitespace or comments between.
            j = k + 1
            inner = False
            if j < count and tokens[j].kind == "punct" and tokens[j].text == "!":
                inner = True
                j += 1
            if not (j < count and tokens[j].kind == "punct" and tokens[j].text == "["):
                continue
            close = matching_close(tokens, j)
            body = tokens[j + 1:close]
            for b in body:
                if b.kind == "ident" and b.text == "path":
                    refuse(b, "`#[path]` would point rustc at another file")
                    break
            name = body[0].text if body and body[0].kind == "ident" else ""
            if not inner:
                continue
            if name in KEPT_INNER_ATTRIBUTES:
                continue
            if name in DROPPED_INNER_ATTRIBUTES:
                blanks.append((t.start, tokens[close].end))
                continue
            if name == "feature":
                asked = [b.text for b in body[1:] if b.kind == "ident"]
                unknown = [f for f in asked if f not in FEATURES]
                if unknown:
                    refuse(t, f"feature `{unknown[0]}` is not available: kernels are compiled "
                              f"with {', '.join(FEATURES)} (already on; no #![feature] needed)")
                else:
                    blanks.append((t.start, tokens[close].end))
                continue
            shown = name or "..."
            refuse(t, f"`#![{shown}]` is not allowed: it would change how the judge compiles "
                      f"the crate (allowed: #![allow/warn/deny/forbid/expect(...)], #![doc], "
                      f"#![no_std], #![feature] of the ones already on)")
    return refusals, blanks


def find_fn_definition(tokens, name):
    """(line, col) of `fn name` at the top level of the file, else of any `fn name`."""
    depth = 0
    found = None
    for k, t in enumerate(tokens):
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        elif (t.kind == "ident" and t.text == name and k > 0 and tokens[k - 1].kind == "ident"
              and tokens[k - 1].text == "fn"):
            if depth == 0:
                return tokens[k - 1].line, tokens[k - 1].col
            if found is None:
                found = (tokens[k - 1].line, tokens[k - 1].col)
    return found


# ----------------------------------------------------------------------------------------------
# Mode 2, step 3: the crate root
# ----------------------------------------------------------------------------------------------

RUST_TYPES = {"f32": "f32", "f64": "f64", "i32": "i32", "u32": "u32", "i64": "i64", "u64": "u64"}


def contract_types(parameters):
    types = []
    for p in parameters:
        element = RUST_TYPES.get(p.get("element"))
        if element is None:
            raise InternalError(f"contract parameter {p!r}: unknown element type")
        if p.get("kind") == "array":
            types.append(("*const " if p.get("const") else "*mut ") + element)
        elif p.get("kind") == "scalar":
            types.append(element)
        else:
            raise InternalError(f"contract parameter {p!r}: unknown kind")
    return types


def contract_signature(kernel, parameters):
    types = contract_types(parameters)
    names = [re.sub(r"[^a-z0-9_]", "_", str(p.get("name", "p")).lower()) for p in parameters]
    return f"{kernel}({', '.join(f'{n}: {t}' for n, t in zip(names, types))})"


def build_crate(learner_text, kernel, parameters, prelude_text):
    """Returns (root_text, layout): layout gives the line ranges of what the front end added."""
    learner_lines = learner_text.count("\n") + (0 if learner_text.endswith("\n") else 1)
    if learner_text == "":
        learner_lines = 0
    head = learner_text if learner_text.endswith("\n") or not learner_text else learner_text + "\n"
    types = ", ".join(contract_types(parameters))
    added = [
        "#[allow(unused_imports)] use cudojo::*;",
        # The contract check: the stage's kernel must exist at the top level with exactly
        # these parameter types and the ptx-kernel ABI (what the launch passes).
        f"#[allow(dead_code)] const _: unsafe extern \"ptx-kernel\" fn({types}) = {kernel};",
        "#[allow(dead_code, unused, internal_features, non_snake_case)]",
        f"mod {PRELUDE_MODULE} {{",
    ]
    check_line = learner_lines + 2
    prelude_first = learner_lines + len(added) + 1
    prelude_body = prelude_text if prelude_text.endswith("\n") else prelude_text + "\n"
    root = head + "\n".join(added) + "\n" + prelude_body + "}\n"
    # The prelude's `#[kernel]` macro: code it generates is the learner's kernel itself.
    macro_start = prelude_body.find("macro_rules! __cudojo_kernel")
    first = prelude_body.count("\n", 0, max(macro_start, 0))
    last = first
    for k, text in enumerate(prelude_body.split("\n")[first + 1:], start=first + 1):
        if text.startswith("}"):
            last = k
            break
    layout = {
        "learner_lines": learner_lines,
        "check_line": check_line,
        "prelude_first": prelude_first,
        "kernel_macro_lines": (prelude_first + first, prelude_first + last) if macro_start >= 0
        else (0, -1),
    }
    return root, layout


# ----------------------------------------------------------------------------------------------
# Mode 2, step 4: diagnostics
# ----------------------------------------------------------------------------------------------

# rustc's codes for a crate it cannot load or trust.
SYSROOT_ERRORS = {"E0460", "E0461", "E0462", "E0463", "E0464", "E0514", "E0519", "E0523",
                  "E0786"}
HOST_PATH = re.compile(r"(?<![\w.])/(?:usr|tmp|job|home|root|etc|sysroot|work|opt|var|proc|lib"
                       r"|lib64|bin|srv|mnt|run|dev)(?:/[^\s`'\",:;)\]]*)?")


def one_line(text):
    # rustc's notes may span lines ("expected X\n   found Y"); the log keeps one per message.
    return re.sub(r"\s*\n\s*", "; ", text.strip())


class Mapper:
    def __init__(self, layout, file_name, kernel, parameters, tokens, workdir, sysroot):
        self.layout = layout
        self.file_name = file_name
        self.kernel = kernel
        self.signature = contract_signature(kernel, parameters)
        self.tokens = tokens
        self.workdir = workdir
        self.sysroot = sysroot

    def scrub(self, text):
        for prefix in (self.workdir + "/", self.workdir, self.sysroot):
            if prefix:
                text = text.replace(prefix, "")
        text = text.replace(ROOT_NAME, self.file_name)
        return HOST_PATH.sub("<path>", text)

    def region(self, span):
        name = span.get("file_name", "")
        if os.path.basename(name) != ROOT_NAME:
            return "library"
        line = span.get("line_start", 0)
        if 1 <= line <= self.layout["learner_lines"]:
            return "learner"
        if line == self.layout["check_line"]:
            return "check"
        return "prelude"

    def learner_span(self, span):
        """The learner's span for this one, following macro call sites outward."""
        seen = 0
        while span is not None and seen < 64:
            if self.region(span) == "learner":
                return span
            expansion = span.get("expansion")
            span = expansion.get("span") if expansion else None
            seen += 1
        return None

    def locate(self, spans):
        ordered = [s for s in spans if s.get("is_primary")] + [s for s in spans
                                                                if not s.get("is_primary")]
        for s in ordered:
            hit = self.learner_span(s)
            if hit is not None:
                return hit
        return None

    def contract_message(self, diag):
        code = (diag.get("code") or {}).get("code")
        how = (f"declare it `#[kernel] fn {self.kernel}(...)` or `#[no_mangle] pub unsafe extern "
               f"\"ptx-kernel\" fn {self.kernel}(...)` at the top level of the file")
        if code == "E0425":
            return (0, 0, f"no kernel named `{self.kernel}`: the stage launches "
                          f"{self.signature}; {how}")
        found = ""
        for child in diag.get("children", []):
            m = re.search(r"found (?:fn item|fn pointer|.*?) `([^`]*)`", child.get("message", ""))
            if m:
                found = re.sub(r"\s*\{[^{}]*\}$", "", m.group(1))
        where = find_fn_definition(self.tokens, self.kernel) or (0, 0)
        text = f"`{self.kernel}` must take exactly what the stage launches: {self.signature}, " \
               f"and be a kernel ({how})"
        if found:
            text += f"; this one is `{found}`"
        return where[0], where[1], text

    def convert(self, diag):
        """One rustc diagnostic -> (diagnostic entries, log lines)."""
        level = diag.get("level", "error")
        message = diag.get("message", "")
        if level not in ("error", "warning") or re.match(
                r"aborting due to|\d+ warnings? emitted|Some errors have detailed|"
                r"For more information about", message):
            return [], []
        if level == "warning" and message.startswith("the feature") and "internal" in message:
            return [], []
        spans = diag.get("spans", [])
        code = (diag.get("code") or {}).get("code")
        if code in SYSROOT_ERRORS or re.search(r"invalid metadata files|can't find crate for "
                                               r"`(core|compiler_builtins)`", message):
            # The sysroot could not be loaded (stale, damaged, or rustc short of memory to map
            # it): the judge's failure, whatever the learner wrote.
            raise InternalError("rustc could not load the Rust sysroot: " + one_line(message))
        severity = "error" if level == "error" else "warning"
        primary = next((s for s in spans if s.get("is_primary")), spans[0] if spans else None)
        hit = self.locate(spans)
        children = []
        if primary is not None and self.region(primary) == "check":
            if severity == "warning":
                return [], []
            line, col, text = self.contract_message(diag)
        elif hit is not None:
            line, col = hit["line_start"], hit["column_start"]
            text = message
            label = hit.get("label")
            if label and label not in message and " ".join(label.split()[-3:]) not in message \
                    and hit.get("is_primary", True):
                text += f": {label}"
            if code and severity == "error":
                text = f"[{code}] {text}"
            for child in diag.get("children", []):
                cmsg = child.get("message", "")
                if not cmsg or cmsg.endswith("on by default"):
                    continue
                cspans = [s for s in child.get("spans", []) if self.region(s) == "learner"]
                if child.get("spans") and not cspans:
                    continue  # it points into the prelude or core: not the learner's business
                cline, ccol = (cspans[0]["line_start"], cspans[0]["column_start"]) if cspans \
                    else (line, col)
                replacement = cspans[0].get("suggested_replacement") if cspans else None
                if replacement is not None and "\n" not in replacement:
                    cmsg += f": `{replacement}`"
                children.append((cline, ccol, child.get("level", "note"), cmsg))
        else:
            if severity == "warning":
                return [], []  # warnings about the front end's own lines are not the learner's
            line, col = 0, 0
            text = "in cudojo's prelude: " + message if primary is not None else message
        text = one_line(self.scrub(text))
        entry = {"line": line, "column": col, "severity": severity, "message": text}
        log = [f"{self.file_name}:{line}:{col}: {severity}: {text}"]
        for cline, ccol, clevel, cmsg in children:
            log.append(f"{self.file_name}:{cline}:{ccol}: {clevel}: {one_line(self.scrub(cmsg))}")
        return [entry], log


# ----------------------------------------------------------------------------------------------
# Mode 2, step 5: the PTX
# ----------------------------------------------------------------------------------------------

FILE_RE = re.compile(r'^(\s*)\.file\s+(\d+)\s+"([^"]*)"(.*)$')
LOC_RE = re.compile(r"^(\s*)\.loc\s+(\d+)\s+(\d+)\s+(\d+)([^/]*)(//(.*))?$")
FRAME_RE = re.compile(r"^(.*?):(\d+)(?::(\d+))?$")


def readable_symbol(name):
    """A Rust mangled name (legacy `_ZN...E` or v0 `_R...`), roughly demangled, for messages."""
    if name.startswith("_ZN"):
        body = name[3:]
    elif name.startswith("_R"):
        # v0: drop the disambiguators (`s<base62>_`) after crate roots and namespace tags.
        body = re.sub(r"(C|N[A-Za-z])s[0-9A-Za-z]*_", r"\1", name[2:])
    else:
        return name
    parts = []
    k = 0
    while k < len(body):
        m = re.compile(r"\d+").match(body, k)
        if not m:
            k += 1
            continue
        length = int(m.group())
        k = m.end()
        if name.startswith("_R") and body.startswith("_", k):
            k += 1  # v0 separates an identifier that starts with `_` or a digit
        word = body[k:k + length]
        k += max(length, 1)
        if word and not re.fullmatch(r"h[0-9a-f]{16}", word):
            parts.append(word)
    return "::".join(parts) if parts else name


def tidy_ptx(ptx, layout, file_name, tokens):
    """Learner lines for every .loc, host-free .file names, no verbose-asm comments.
    Returns (ptx, source_file_index or None)."""
    lines = ptx.split("\n")
    files = {}
    for line in lines:
        m = FILE_RE.match(line)
        if m:
            files[int(m.group(2))] = m.group(3)
    root_index = next((k for k, path in files.items()
                       if os.path.basename(path) == ROOT_NAME), None)
    prelude_index = (max(files) + 1) if files else None
    learner_last = layout["learner_lines"]
    prelude_first = layout["prelude_first"]
    kernel_macro = layout["kernel_macro_lines"]
    used_prelude = False
    function = None
    fn_lines = {}

    def pick(comment):
        # Innermost frame of the inlining chain that is one of the learner's lines.
        if comment:
            for part in comment.split("@["):
                part = part.strip().rstrip("] ")
                m = FRAME_RE.match(part)
                if not m:
                    continue
                path, fl, fc = m.group(1), int(m.group(2)), int(m.group(3) or 0)
                if os.path.basename(path) == ROOT_NAME and 1 <= fl <= learner_last:
                    return root_index, fl, fc
        return None

    out = []
    for line in lines:
        m = re.match(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)",
                     line)
        if m:
            function = m.group(1)
        m = LOC_RE.match(line)
        if m and root_index is not None:
            indent, index, line_no, col = m.group(1), int(m.group(2)), int(m.group(3)), \
                int(m.group(4))
            rest = m.group(5).rstrip()
            chosen = pick(m.group(7))
            if chosen is None and index == root_index and line_no >= prelude_first:
                if kernel_macro[0] <= line_no <= kernel_macro[1] and function:
                    # The entry and return of a `#[kernel] fn`: the learner's `fn` line.
                    if function not in fn_lines:
                        fn_lines[function] = find_fn_definition(tokens, function)
                    if fn_lines[function]:
                        chosen = (root_index, fn_lines[function][0], 0)
                if chosen is None:
                    chosen = (prelude_index, line_no - prelude_first + 1, col)
                    used_prelude = True
            if chosen is not None:
                index, line_no, col = chosen
            out.append(f"{indent}.loc\t{index} {line_no} {col}{rest}")
            continue
        m = FILE_RE.match(line)
        if m:
            index, path = int(m.group(2)), m.group(3)
            if index == root_index:
                shown = file_name
            elif "rust-library/" in path:
                shown = "rust-library/" + path.split("rust-library/", 1)[1]
            else:
                shown = os.path.basename(path)
            shown = shown.replace("\\", "/").replace('"', "")
            out.append(f'{m.group(1)}.file\t{index} "{shown}"')
            continue
        if '"' not in line:
            code, sep, comment = line.partition("//")
            if sep and code.strip():
                line = code.rstrip()  # a verbose-asm remark after an instruction or label
            elif sep and VERBOSE_REMARK.match(comment):
                continue  # a verbose-asm remark on its own line
            elif sep and "//" in comment:
                line = code + sep + comment.split("//", 1)[0].rstrip()  # "// .globl f  // @f"
        out.append(line)
    if used_prelude:
        last_file = max((k for k, line in enumerate(out) if FILE_RE.match(line)), default=None)
        directive = f'\t.file\t{prelude_index} "{PRELUDE_DISPLAY}"'
        if last_file is None:
            out.append(directive)
        else:
            out.insert(last_file + 1, directive)
    return "\n".join(out), root_index


VERBOSE_REMARK = re.compile(r"\s*(%bb|@|-- |=>|in Loop|Start of file|End of file|\s*$)")
ENTRY_RE = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)\s*\(")


def entry_params(ptx, name):
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        return None
    return re.findall(r"\.param\s+\.(\w+)", m.group(1))


def check_ptx(ptx, kernel, parameters, arch, mapper, tokens):
    """Errors (line, col, message) about the PTX: the entry, its parameters, missing code."""
    errors = []
    entries = [m.group(1) for m in map(ENTRY_RE.match, ptx.split("\n")) if m]
    if kernel not in entries:
        where = find_fn_definition(tokens, kernel) or (0, 0)
        errors.append((where[0], where[1],
                       f"`{kernel}` is not a launchable kernel: put `#[kernel]` (or `#[no_mangle]` "
                       f"with `pub unsafe extern \"ptx-kernel\"`) before `fn {kernel}` so the PTX "
                       f"has an entry named `{kernel}`"))
    else:
        want = ["u64" if p.get("kind") == "array" else
                ("u32" if p.get("element") in ("i32", "u32") else "f32"
                 if p.get("element") == "f32" else "u64") for p in parameters]
        got = entry_params(ptx, kernel)
        if got is not None and [("u32" if g in ("b32", "s32") else "u64" if g in ("b64", "s64")
                                 else g) for g in got] != want:
            where = find_fn_definition(tokens, kernel) or (0, 0)
            errors.append((where[0], where[1],
                           f"`{kernel}` must take exactly what the stage launches: "
                           f"{mapper.signature}"))
    missing = []
    functions = re.finditer(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", ptx, re.M)
    variables = re.finditer(r"^\s*\.extern\s+\.(?:global|const)\b[^;]*?([A-Za-z_$][\w$]*)\s*"
                            r"(?:\[[^\]]*\])?\s*;", ptx, re.M)
    for m in list(functions) + list(variables):
        if m.group(1) not in PTX_SYSCALLS and m.group(1) not in missing:
            missing.append(m.group(1))
    for name in missing:
        readable = readable_symbol(name)
        last = readable.split("::")[-1]
        use = next((t for t in tokens if t.kind == "ident" and t.text == last), None)
        line, col = (use.line, use.col) if use else (0, 0)
        errors.append((line, col, f"the kernel uses `{readable}`, which does not exist on "
                             f"the GPU here: only the file itself, the prelude and `core`'s inline "
                             f"functions do (no formatting, no float math such as sin or exp)"))
    if not re.search(r"^\.target\s+" + re.escape(arch) + r"\b", ptx, re.M):
        raise InternalError("rustc produced PTX for another target than " + arch)
    return errors


def rustc_command(sysroot, arch, workdir, verbose_asm=True):
    """rustc's command line for the crate root ROOT_NAME in workdir (the cwd)."""
    return [
        RUSTC, "--edition", EDITION, "--crate-type", "lib", "--crate-name", "cudojo_kernel",
        "--target", TARGET, "--sysroot", sysroot,
        "-C", f"target-cpu={arch}", "-C", "opt-level=3", "-C", "codegen-units=1",
        "-C", "debug-assertions=off", "-C", "overflow-checks=off",
        "-C", "debuginfo=line-directives-only",  # .loc/.file only, no DWARF sections
        "-Z", "unstable-options", "-C", "panic=immediate-abort",  # a panic is a trap
        *(["-Z", "verbose-asm"] if verbose_asm else []),  # each .loc's inlining chain
        "-Z", "crate-attr=no_std",
        "-Z", f"crate-attr=feature({', '.join(FEATURES)})",
        "-A", "internal_features",
        "--remap-path-prefix", f"{workdir}=",
        "--error-format=json", "--json=diagnostic-short",
        "--emit", "asm=kernel.ptx", ROOT_NAME,
    ]


# ----------------------------------------------------------------------------------------------
# Mode 2: compiling a request
# ----------------------------------------------------------------------------------------------


def answer_error(file_name, errors):
    diagnostics = [{"line": l, "column": c, "severity": "error", "message": m}
                   for l, c, m in errors]
    log = [f"{file_name}:{l}:{c}: error: {m}" for l, c, m in errors]
    return {"ok": False, "diagnostics": diagnostics, "log": "\n".join(log)}


def compile_request(request):
    language = request.get("language")
    if language != "rust":
        raise InternalError(f"this front end compiles Rust, not {language!r}")
    file_name = os.path.basename(str(request.get("file_name") or "kernel.rs")) or "kernel.rs"
    file_name = re.sub(r"[^\w.\- ]", "_", file_name)
    kernel = request.get("kernel", "")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel or ""):
        raise InternalError(f"bad kernel name {kernel!r}")
    parameters = request.get("parameters") or []
    arch = request.get("arch", "")
    if not valid_arch(arch):
        raise InternalError(f"bad arch {arch!r}")
    sysroot = request.get("rust_sysroot") or ""
    try:
        with open(request["prelude_path"], encoding="utf-8") as f:
            prelude = f.read()
    except (KeyError, OSError) as e:
        raise InternalError(f"cannot read the prelude: {e}")
    try:
        with open(request["source_path"], "rb") as f:
            raw = f.read(MAX_SOURCE_BYTES + 1)
    except (KeyError, OSError) as e:
        raise InternalError(f"cannot read the submission: {e}")
    if len(raw) > MAX_SOURCE_BYTES:
        return answer_error(file_name, [(0, 0, f"the file is over {MAX_SOURCE_BYTES // 1024} KiB")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        return answer_error(file_name, [(line, 0, "the file is not valid UTF-8")])
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")

    started = time.monotonic()
    # 1. Policy
    try:
        tokens = lex(text)
    except LexError as e:
        return answer_error(file_name, [(e.line, e.col, e.message)])
    unbalanced = check_delimiters(tokens)
    if unbalanced:
        return answer_error(file_name, [(unbalanced.line, unbalanced.col, unbalanced.message)])
    refusals, blanks = scan_policy(tokens)
    if refusals:
        refusals.sort(key=lambda r: (r.line, r.col))
        return answer_error(file_name, [(r.line, r.col, r.message) for r in refusals])
    chars = list(text)
    for start, end in blanks:
        for k in range(start, end):
            if chars[k] != "\n":
                chars[k] = " "
    text = "".join(chars)

    # 2. The crate
    root_text, layout = build_crate(text, kernel, parameters, prelude)
    stamp = read_stamp(sysroot)
    workdir = tempfile.mkdtemp(prefix="cudojo-rust-")
    try:
        version_line, _ = rustc_version(workdir)
        if stamp != stamp_text(version_line, arch):
            raise InternalError(f"the Rust sysroot at {sysroot} is missing or stale for "
                                f"{version_line} / {arch}: run --build-sysroot again")
        with open(os.path.join(workdir, ROOT_NAME), "w", encoding="utf-8") as f:
            f.write(root_text)
        cmd = rustc_command(sysroot, arch, workdir)
        try:
            proc = subprocess.run(cmd, cwd=workdir, env=rustc_env(workdir), capture_output=True,
                                  text=True, timeout=RUSTC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return answer_error(file_name, [(0, 0, f"rustc took over {RUSTC_TIMEOUT_S} s on this "
                                                   f"file and was stopped")])
        except OSError as e:
            raise InternalError(f"cannot run {RUSTC}: {e}")
        compile_s = time.monotonic() - started

        # 3. Diagnostics
        mapper = Mapper(layout, file_name, kernel, parameters, tokens, workdir, sysroot)
        diagnostics, log, others = [], [], []
        seen_errors = set()
        for raw_line in proc.stderr.splitlines():
            try:
                diag = json.loads(raw_line)
            except ValueError:
                others.append(raw_line)
                continue
            if not isinstance(diag, dict) or diag.get("$message_type", "diagnostic") != \
                    "diagnostic":
                continue
            entries, lines = mapper.convert(diag)
            if any(e["severity"] == "error" and e["line"] and (e["line"], e["column"]) in
                   seen_errors for e in entries):
                continue  # a second complaint about the same spot (E0435 then E0425, say)
            seen_errors.update((e["line"], e["column"]) for e in entries
                               if e["severity"] == "error")
            if len(diagnostics) < MAX_DIAGNOSTICS:
                diagnostics += entries
                log += lines
        errors = [d for d in diagnostics if d["severity"] == "error"]
        if proc.returncode != 0 or errors:
            if not errors:
                # No diagnostic but a failure: rustc crashed on something in this file.
                if any("memory allocation" in line for line in others):
                    reason = "rustc ran out of memory compiling this file"
                elif "internal compiler error" in proc.stderr or proc.returncode == 101:
                    reason = ("rustc crashed on this file (an internal compiler error); try "
                              "writing the construct differently")
                else:
                    reason = f"rustc stopped without a message (exit status {proc.returncode})"
                diagnostics.append({"line": 0, "column": 0, "severity": "error",
                                    "message": reason})
                log.append(f"{file_name}:0:0: error: {reason}")
            return {"ok": False, "diagnostics": diagnostics, "log": "\n".join(log)}

        # 4. The PTX
        with open(os.path.join(workdir, "kernel.ptx"), encoding="utf-8") as f:
            ptx = f.read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    ptx, source_index = tidy_ptx(ptx, layout, file_name, tokens)
    ptx_errors = check_ptx(ptx, kernel, parameters, arch, mapper, tokens)
    if ptx_errors:
        answer = answer_error(file_name, ptx_errors)
        answer["diagnostics"] = diagnostics + answer["diagnostics"]
        answer["log"] = "\n".join(log + [answer["log"]])
        return answer
    result = {
        "ok": True,
        "ptx": ptx,
        "entry": kernel,
        "abi": "plain",
        "diagnostics": diagnostics,
        "log": "\n".join(log),
        "compile_seconds": round(compile_s, 3),
    }
    if source_index is not None:
        result["source_file_index"] = source_index
        result["line_offset"] = 0
    return result


def main(argv):
    if len(argv) >= 2 and argv[1] == "--build-sysroot":
        args = argv[2:]
        target = args[0] if args else ""
        arch = "sm_90"
        if "--arch" in args and args.index("--arch") + 1 < len(args):
            arch = args[args.index("--arch") + 1]
        if not target or target.startswith("--"):
            emit({"ok": False, "log": "usage: rust_frontend.py --build-sysroot DIR --arch sm_90"},
                 2)
        try:
            emit(build_sysroot(target, arch))
        except (InternalError, OSError) as e:
            emit({"ok": False, "log": str(e)}, 2)
    try:
        if len(argv) != 2:
            raise InternalError("usage: rust_frontend.py /job/request.json")
        with open(argv[1], encoding="utf-8") as f:
            request = json.load(f)
        if not isinstance(request, dict):
            raise InternalError("the request is not a JSON object")
        answer = compile_request(request)
    except Exception as e:  # noqa: BLE001 - whatever broke, it is the judge's failure
        detail = str(e) if isinstance(e, (InternalError, OSError, ValueError)) else repr(e)
        answer = {"ok": False, "internal": True, "diagnostics": [],
                  "log": "cudojo's Rust front end failed: " + detail}
    emit(answer)


if __name__ == "__main__":
    main(sys.argv)
