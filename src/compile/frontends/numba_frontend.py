#!/usr/bin/python3
"""cudojo's Python front end: one learner file of Numba CUDA kernels in, one JSON answer out.

Run as `/usr/bin/python3 -I numba_frontend.py /job/request.json` (PROTOCOL.md beside this file says
what the request holds and what the answer must be). Debian's python3-numba 0.56.4 is the compiler.

Theory of operation
  1. Read the request (the judge's; a bad one is an internal error).
  2. Read the learner's file and check it with `ast` against an allowlist. Nothing the learner
     wrote has run yet, and nothing runs if the check refuses: the top level may only import
     numba / numba.cuda / math, bind constants and define `@cuda.jit` functions; no name or
     attribute anywhere may reach Python's internals (`__class__`, `__globals__`, ...).
  3. Point Numba at the toolkit (a folder of links under /tmp: Numba 0.56 looks for
     $CUDA_HOME/nvvm/lib64/libnvvm.so, CUDA 13 keeps libnvvm.so.4 elsewhere) and patch the
     four places where Numba 0.56 does not fit CUDA 13 or the judge (see "Toolchain" below).
  4. Execute the module with a few builtins and an import that only hands out the allowed
     modules. Because of step 2 this only binds constants and wraps functions in cuda.jit.
  5. Compile the stage's kernel with the contract's parameter types to PTX with `.loc` lines
     of the learner's file, find the mangled `.entry`, print the answer.

Two kinds of failure stay apart: the learner's file failing (a compile error: ok=false with
diagnostics at the learner's lines) and this script failing (internal=true). Whatever happens,
exactly one JSON object goes to stdout; Numba's and libNVVM's own chatter goes to stderr.
"""

import ast
import importlib
import json
import math
import os
import re
import sys
import tempfile
import traceback

# ---------------------------------------------------------------------------------------------
# What the learner's file may use
# ---------------------------------------------------------------------------------------------

ALLOWED_MODULES = ("numba", "numba.cuda", "math")

# Type names a kernel may take from numba (`from numba import float32`).
NUMBA_TYPE_NAMES = frozenset({
    "boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "intp", "uintp", "float32", "float64", "void",
})

# numba.cuda's device API: what runs inside a kernel, plus `jit`. Host API (to_device, gpus,
# compile_ptx, ...) is refused: the judge allocates, launches and compiles.
CUDA_DEVICE_NAMES = frozenset({
    "jit",
    "threadIdx", "blockIdx", "blockDim", "gridDim", "grid", "gridsize", "laneid", "warpsize",
    "shared", "local", "const",
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp",
    "threadfence", "threadfence_block", "threadfence_system",
    "atomic", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
    "all_sync", "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync",
    "activemask", "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp",
    "nanosleep", "fp16",
})

# `@cuda.jit(...)` keywords a learner may give, each True or False. Others are refused: `link`
# reads host files, `cache` writes them, `debug` changes what the judge measures.
JIT_KEYWORDS = ("device", "inline", "fastmath", "lineinfo")

# Builtins that would reach the host (files, code, objects) if anything ever ran them.
FORBIDDEN_BUILTINS = frozenset({
    "open", "exec", "eval", "compile", "getattr", "setattr", "delattr", "globals", "locals",
    "vars", "breakpoint", "input", "__import__",
})

# The builtins the module runs with. Module-level code only imports, binds constants and
# defines functions; Numba resolves the names a kernel uses (range, min, ...) from this too.
KERNEL_BUILTINS = (
    "range", "len", "min", "max", "abs", "int", "float", "bool", "round", "pow", "divmod",
    "complex", "print", "enumerate", "zip", "Exception", "ValueError", "IndexError",
    "RuntimeError", "ZeroDivisionError", "AssertionError",
)

MATH_CONSTANTS = frozenset({"pi", "e", "tau", "inf", "nan"})

# Constant expressions are evaluated before anything runs; these keep `10 ** 10 ** 10` from
# hanging the compile.
MAX_CONSTANT_BITS = 64
MAX_DIAGNOSTICS = 20

IMPORT_RULE = ("only `from numba import cuda`, `import numba`, `import math` (and numba type "
               "names) may be imported; cudojo judges kernels, not host programs")
TOP_LEVEL_RULE = ("only imports, constants (`THREADS = 256`) and `@cuda.jit` functions may "
                  "appear at the top level: top-level code would run on the host")

# numba element names for the request's element codes.
ELEMENT_TYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "u32": "uint32",
                 "i64": "int64", "u64": "uint64"}


class CompileError(Exception):
    """The learner's file is refused. `diagnostics` are (line, column, message), 1-based."""

    def __init__(self, diagnostics):
        super().__init__(diagnostics[0][2] if diagnostics else "")
        self.diagnostics = diagnostics


class InternalError(Exception):
    """The judge's side failed (bad request, toolkit missing, Numba misbehaving)."""


# ---------------------------------------------------------------------------------------------
# The request and the contract
# ---------------------------------------------------------------------------------------------

def read_request(path):
    try:
        with open(path, encoding="utf-8") as f:
            request = json.load(f)
    except (OSError, ValueError) as e:
        raise InternalError(f"cannot read the request: {type(e).__name__}")
    for key in ("source_path", "file_name", "kernel", "parameters", "arch", "cuda_home"):
        if key not in request:
            raise InternalError(f"the request has no `{key}`")
    # Absolute, because the compile runs in a temporary working directory.
    request["source_path"] = os.path.abspath(str(request["source_path"]))
    if not re.fullmatch(r"sm_\d{2,3}", str(request["arch"])):
        raise InternalError(f"unsupported arch {request['arch']!r}")
    for p in request["parameters"]:
        if p.get("kind") not in ("array", "scalar") or p.get("element") not in ELEMENT_TYPES:
            raise InternalError(f"unsupported parameter {p!r}")
    return request


def contract_text(request):
    """How a learner should read the launch: "`reduce(X, out, N)`: X float32 array (read only),
    out float32 array, N int32"."""
    params = request["parameters"]
    names = ", ".join(p["name"] for p in params)
    parts = []
    for p in params:
        element = ELEMENT_TYPES[p["element"]]
        if p["kind"] == "array":
            read_only = " (read only)" if p.get("const") else ""
            parts.append(f"{p['name']} {element} array{read_only}")
        else:
            parts.append(f"{p['name']} {element}")
    return f"the stage launches `{request['kernel']}({names})`: " + ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# Source policy: an allowlist over the syntax tree, checked before anything runs
# ---------------------------------------------------------------------------------------------

def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


class SourcePolicy:
    """Walks the module once. Top-level statements are checked against an allowlist; function
    bodies (compiled by Numba, never run on the host) against a list of refused names.

    `bindings` maps each imported name to what it stands for ("numba", "numba.cuda", "math",
    "numba.cuda.jit", "numba.float32", ...) so decorators and attribute chains can be resolved
    without running anything. `constants` holds the top-level constants by name."""

    def __init__(self, kernel_name):
        self.kernel_name = kernel_name
        self.bindings = {}
        self.constants = {}
        self.functions = {}  # name -> last top-level FunctionDef of that name
        self.problems = []

    def refuse(self, node, message):
        line = getattr(node, "lineno", 0) or 0
        column = (getattr(node, "col_offset", -1) or 0) + 1 if line else 0
        # The end column breaks ties: in `().__class__.__bases__` every attribute starts where
        # the expression starts, and the innermost (shortest) is the one to name.
        end = getattr(node, "end_col_offset", 0) or 0
        self.problems.append((line, column, end, message))

    # -- the whole file ------------------------------------------------------------------------

    def check(self, tree):
        for node in ast.walk(tree):
            self.check_identifiers(node)
        for statement in tree.body:
            self.check_top_level(statement)
        # One message per line, in file order: the first cause on a line is the one to fix.
        seen, unique = set(), []
        for line, column, _, message in sorted(self.problems, key=lambda p: p[:3]):
            if line not in seen or line == 0:
                seen.add(line)
                unique.append((line, column, message))
        return unique[:MAX_DIAGNOSTICS]

    def check_identifiers(self, node):
        """Every identifier in the file (names, attributes, parameters, keywords, imports,
        pattern fields): no dunders. String literals are data, not identifiers."""
        if isinstance(node, ast.Constant):
            return
        for _, value in ast.iter_fields(node):
            for name in (value if isinstance(value, list) else [value]):
                if isinstance(name, str) and any(is_dunder(p) for p in name.split(".")):
                    self.refuse(node, f"`{name}` is refused: names that begin and end with "
                                      "`__` reach Python's internals, which a kernel never needs")
                    return

    # -- top level -----------------------------------------------------------------------------

    def check_top_level(self, node):
        if isinstance(node, ast.Import):
            self.check_import(node)
        elif isinstance(node, ast.ImportFrom):
            self.check_import_from(node)
        elif isinstance(node, ast.FunctionDef):
            if node.name in self.bindings or node.name in self.constants:
                self.refuse(node, f"`{node.name}` is already imported or defined above; "
                                  "pick another name for the function")
            self.check_function(node)
            self.functions[node.name] = node
        elif isinstance(node, ast.Assign):
            self.check_constant_assignment(node)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            pass  # a docstring or a bare string
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.refuse(node, f"this line calls {describe_callee(node.value)} at the top level; "
                              + TOP_LEVEL_RULE)
        elif isinstance(node, ast.ClassDef):
            self.refuse(node, "classes are refused: a kernel is a `@cuda.jit` function, and "
                              "a class body runs on the host")
        elif isinstance(node, ast.AsyncFunctionDef):
            self.refuse(node, "`async def` is refused: kernels are plain `@cuda.jit` functions")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.refuse(node, "`global` is refused: a kernel writes its results through its "
                              "array parameters")
        elif isinstance(node, ast.AnnAssign):
            self.refuse(node, "annotations are refused: Python evaluates them on the host; "
                              "write `NAME = value`")
        else:
            kind = type(node).__name__.lower()
            self.refuse(node, f"a top-level `{kind}` statement is refused; " + TOP_LEVEL_RULE)

    def check_import(self, node):
        for alias in node.names:
            if alias.name not in ALLOWED_MODULES:
                self.refuse(node, IMPORT_RULE)
                continue
            if alias.asname:
                self.bind(node, alias.asname, alias.name)
            else:
                self.bind(node, alias.name.split(".")[0], alias.name.split(".")[0])

    def check_import_from(self, node):
        if node.level != 0 or node.module not in ALLOWED_MODULES:
            self.refuse(node, IMPORT_RULE)
            return
        for alias in node.names:
            name = alias.name
            if name == "*":
                self.refuse(node, "`import *` is refused: name what the kernel uses, e.g. "
                                  "`from numba import cuda, float32`")
            elif node.module == "numba" and name != "cuda" and name not in NUMBA_TYPE_NAMES:
                self.refuse(node, f"`{name}` cannot be imported from numba: " + IMPORT_RULE)
            elif node.module == "numba.cuda" and name not in CUDA_DEVICE_NAMES:
                self.refuse(node, f"`{name}` cannot be imported from numba.cuda: it is not "
                                  "part of the device API a kernel uses; " + IMPORT_RULE)
            elif node.module == "math" and name.startswith("_"):
                self.refuse(node, f"`{name}` cannot be imported from math")
            else:
                self.bind(node, alias.asname or name, f"{node.module}.{name}")

    def bind(self, node, name, meaning):
        if name in self.constants or name in self.functions:
            self.refuse(node, f"`{name}` is already defined above; pick another name")
        self.bindings[name] = meaning

    def check_constant_assignment(self, node):
        for target in node.targets:
            if not isinstance(target, ast.Name):
                self.refuse(node, "only `NAME = constant` may appear at the top level; "
                                  + TOP_LEVEL_RULE)
                return
            if target.id in self.bindings or target.id in self.functions:
                self.refuse(node, f"`{target.id}` is already the imported or defined "
                                  f"`{target.id}`; rebinding it would change what the kernels "
                                  "mean. Pick another name")
                return
        if isinstance(node.value, ast.Lambda):
            self.refuse(node, "a top-level lambda is refused: write a "
                              "`@cuda.jit(device=True)` function")
            return
        value = self.constant_value(node.value, f"`{node.targets[0].id} = ...`")
        if value is not None:
            for target in node.targets:
                self.constants[target.id] = value

    # -- constant expressions ------------------------------------------------------------------

    def constant_value(self, node, what):
        """The value of a constant expression, or None after refusing it. Values are wrapped
        in a 1-tuple so a constant None stays apart from a refusal."""
        try:
            return (evaluate_constant(node, self.constants, self.bindings),)
        except NotConstant as e:
            self.refuse(e.node or node, f"{what} must be a constant or arithmetic on constants "
                                        f"(numbers, True/False/None, earlier constants); {e}")
        except (ArithmeticError, ValueError) as e:
            self.refuse(node, f"{what}: the constant cannot be computed ({e})")
        return None

    # -- functions -----------------------------------------------------------------------------

    def check_function(self, node):
        """A top-level function: `@cuda.jit` decorators, a header that runs nothing, and a
        body for Numba (functions nested in it are checked as they are met)."""
        for decorator in node.decorator_list:
            self.check_decorator(decorator)
        self.check_signature(node.args, node)
        if node.returns is not None:
            self.refuse(node.returns, "annotations are refused: Python evaluates them on the "
                                      "host when the function is defined; drop `-> ...` "
                                      "(Numba infers the types)")
        for child in node.body:
            for inner in ast.walk(child):
                self.check_in_body(inner)

    def check_signature(self, args, node):
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.refuse(arg.annotation, "annotations are refused: Python evaluates them on "
                                            "the host when the function is defined; write "
                                            f"`{arg.arg}` alone (the stage fixes its type)")
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            try:
                evaluate_constant(default, self.constants, self.bindings)
            except (NotConstant, ArithmeticError, ValueError):
                self.refuse(default, "default values run on the host when the function is "
                                     "defined; only constants (numbers, True/False/None, "
                                     "earlier constants) may be defaults")

    def check_decorator(self, decorator):
        if self.resolve(decorator) == "numba.cuda.jit":
            return
        if isinstance(decorator, ast.Call) and self.resolve(decorator.func) == "numba.cuda.jit":
            if decorator.args:
                # Numba would eval() a signature string on the host (numba.core.sigutils).
                self.refuse(decorator, "`@cuda.jit` takes no signature here: the judge "
                                       "compiles the kernel for the stage's parameter types "
                                       "(and Numba would evaluate a signature string on the "
                                       "host)")
            for keyword in decorator.keywords:
                if keyword.arg not in JIT_KEYWORDS:
                    self.refuse(decorator, f"`@cuda.jit({keyword.arg or '**'}=...)` is refused; "
                                           "only " + ", ".join(f"{k}=" for k in JIT_KEYWORDS)
                                           + " (True or False) are accepted")
                elif not (isinstance(keyword.value, ast.Constant)
                          and isinstance(keyword.value.value, bool)):
                    self.refuse(keyword.value, f"`{keyword.arg}=` takes True or False")
            return
        self.refuse(decorator, "only `@cuda.jit`, `@cuda.jit(device=True)` and `@cuda.jit(...)` "
                               "with True/False options may decorate a function: decorators "
                               "run on the host")

    def resolve(self, node):
        """What a name or dotted attribute chain stands for, through the imports, or None."""
        if isinstance(node, ast.Name):
            return self.bindings.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def check_in_body(self, node):
        """Inside a function: normal kernel code, minus what could reach the host."""
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_BUILTINS:
            self.refuse(node, f"`{node.id}` is refused: kernels run on the GPU and cannot open "
                              "files, run code from strings or inspect objects")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.refuse(node, "`global` is refused: a kernel writes its results through its "
                              "array parameters")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.refuse(node, "imports belong at the top of the file; " + IMPORT_RULE)
        elif isinstance(node, ast.ClassDef):
            self.refuse(node, "classes are refused: a kernel is a `@cuda.jit` function")
        elif isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith,
                               ast.Yield, ast.YieldFrom)):
            self.refuse(node, "kernels cannot be generators or coroutines")
        elif isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
                               ast.DictComp, ast.GeneratorExp)):
            # Numba compiles a closure that escapes by pasting its defaults and captured values
            # into Python source and exec()ing it on the host (numba.core.ir_utils): a string
            # there is host code. Comprehensions are closures too.
            self.refuse(node, "functions, lambdas and comprehensions inside a kernel are refused "
                              "(Numba would turn their captured values into host code); write a "
                              "top-level `@cuda.jit(device=True)` function")
        elif isinstance(node, ast.Attribute):
            self.check_module_attribute(node)

    def check_module_attribute(self, node):
        """`cuda.X` must be device API, `numba.X` cuda or a type name: the rest of numba is the
        compiler itself, which a kernel has no business reaching."""
        base = self.resolve(node.value)
        if base == "numba" and node.attr != "cuda" and node.attr not in NUMBA_TYPE_NAMES:
            self.refuse(node, f"`numba.{node.attr}` is refused in kernels: use `cuda` and the "
                              "type names (float32, int32, ...)")
        elif base == "numba.cuda" and node.attr not in CUDA_DEVICE_NAMES:
            self.refuse(node, f"`cuda.{node.attr}` is host API: the judge allocates and "
                              "launches; kernels use the device API (threadIdx, syncthreads, "
                              "shared.array, atomic, shfl_down_sync, ...)")

    # -- the kernel ----------------------------------------------------------------------------

    def check_kernel(self, contract, parameter_count):
        """The function the stage launches: present, a kernel, the contract's parameter count."""
        node = self.functions.get(self.kernel_name)
        if node is None:
            return [(0, 0, f"no kernel named `{self.kernel_name}`: {contract}")]
        args = node.args
        count = len(args.posonlyargs) + len(args.args)
        if args.vararg or args.kwarg or args.kwonlyargs or count != parameter_count:
            return [(node.lineno, node.col_offset + 1,
                     f"`{self.kernel_name}` takes {describe_parameters(args)}; {contract}")]
        jit = [d for d in node.decorator_list
               if self.resolve(d) == "numba.cuda.jit"
               or (isinstance(d, ast.Call) and self.resolve(d.func) == "numba.cuda.jit")]
        if not jit:
            return [(node.lineno, node.col_offset + 1,
                     f"`{self.kernel_name}` needs `@cuda.jit` above it: the stage launches it "
                     "as a kernel")]
        for d in jit:
            for keyword in getattr(d, "keywords", []):
                if keyword.arg == "device" and getattr(keyword.value, "value", False) is True:
                    return [(d.lineno, d.col_offset + 1,
                             f"`{self.kernel_name}` is the kernel the stage launches, so it "
                             "cannot be `device=True`")]
        return []


def describe_parameters(args):
    names = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return f"({', '.join(names)})" if names else "no parameters"


def describe_callee(call):
    """`print`, `os.system`, or for `open(...).read()` the innermost call, `open`. Never the
    arguments: they may hold a host path the learner typed."""
    name = dotted_name(call.func)
    if name:
        return f"`{name}`"
    inner = [n for n in ast.walk(call.func) if isinstance(n, ast.Call)]
    return describe_callee(inner[-1]) if inner else "a function"


def dotted_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class NotConstant(Exception):
    def __init__(self, message, node=None):
        super().__init__(message)
        self.node = node


_BINARY = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
}
_UNARY = {ast.USub: lambda a: -a, ast.UAdd: lambda a: +a, ast.Invert: lambda a: ~a,
          ast.Not: lambda a: not a}


def evaluate_constant(node, constants, bindings):
    """Evaluates a constant expression without running Python: numbers, strings, True/False/None,
    tuples, earlier constants, math.pi-style constants and arithmetic on numbers."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float, str, type(None))):
            return node.value
        raise NotConstant("this literal is not a number or a string", node)
    if isinstance(node, ast.Name):
        if node.id in constants:
            return constants[node.id]
        raise NotConstant(f"`{node.id}` is not a constant defined above", node)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if bindings.get(node.value.id) == "math" and node.attr in MATH_CONSTANTS:
            return float(getattr(math, node.attr))
    if isinstance(node, ast.Tuple):
        return tuple(evaluate_constant(e, constants, bindings) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return bounded(_UNARY[type(node.op)](number(node.operand, constants, bindings)), node)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = number(node.left, constants, bindings)
        right = number(node.right, constants, bindings)
        if isinstance(node.op, (ast.Pow, ast.LShift)) and isinstance(right, int) \
                and abs(right) > MAX_CONSTANT_BITS:
            raise NotConstant("the exponent or shift is too large", node)
        return bounded(_BINARY[type(node.op)](left, right), node)
    if isinstance(node, ast.Call):
        raise NotConstant(f"this calls {describe_callee(node)}, which would run on the host", node)
    raise NotConstant(f"a `{type(node).__name__}` expression is not a constant", node)


def number(node, constants, bindings):
    value = evaluate_constant(node, constants, bindings)
    if isinstance(value, (int, float)):  # bool is an int
        return value
    raise NotConstant("arithmetic is only on numbers", node)


def bounded(value, node):
    if isinstance(value, int) and value.bit_length() > MAX_CONSTANT_BITS:
        raise NotConstant(f"the value does not fit in {MAX_CONSTANT_BITS} bits", node)
    return value


def check_source(text, request):
    """Parses and checks the learner's text; raises CompileError with every refusal."""
    try:
        tree = ast.parse(text, filename=request["file_name"])
    except SyntaxError as e:
        line = e.lineno or 0
        raise CompileError([(line, (e.offset or 0) if line else 0, f"syntax error: {e.msg}")])
    except (ValueError, RecursionError, MemoryError) as e:
        reason = "it nests too deeply" if isinstance(e, (RecursionError, MemoryError)) else e
        raise CompileError([(0, 0, f"the file cannot be parsed: {reason}")])
    policy = SourcePolicy(request["kernel"])
    try:
        problems = policy.check(tree)
    except RecursionError:
        raise CompileError([(0, 0, "the file cannot be checked: it nests too deeply")])
    if problems:
        raise CompileError(problems)
    problems = policy.check_kernel(contract_text(request), len(request["parameters"]))
    if problems:
        raise CompileError(problems)
    return tree, policy.functions[request["kernel"]].lineno


# ---------------------------------------------------------------------------------------------
# Toolchain: the toolkit's libNVVM for Numba 0.56, and the patches that make it fit
# ---------------------------------------------------------------------------------------------

def link_toolkit(cuda_home, work_dir):
    """Makes work_dir look like the CUDA_HOME Numba 0.56 expects: nvvm/lib64/libnvvm.so and
    nvvm/libdevice/, as links into the read-only toolkit. Returns the folder."""
    nvvm_lib = first_existing(cuda_home, ["nvvm/lib64", "lib64", "lib", "nvvm/lib",
                                          "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"],
                              re.compile(r"libnvvm\.so(\.\d+)*$"))
    libdevice = first_existing(cuda_home, ["nvvm/libdevice"], re.compile(r"libdevice.*\.bc$"))
    if nvvm_lib is None or libdevice is None:
        raise InternalError("libnvvm.so or libdevice is missing from the toolkit (cuda_home)")
    home = os.path.join(work_dir, "cuda")
    os.makedirs(os.path.join(home, "nvvm", "lib64"))
    os.makedirs(os.path.join(home, "nvvm", "libdevice"))
    # Numba only takes a versioned name (libnvvm.so.4); with none it would quietly dlopen
    # whatever libnvvm.so the system loader finds.
    name = os.path.basename(nvvm_lib)
    name = name if re.fullmatch(r"libnvvm\.so\.\d+(\.\d+)*", name) else "libnvvm.so.0"
    os.symlink(nvvm_lib, os.path.join(home, "nvvm", "lib64", name))
    os.symlink(libdevice, os.path.join(home, "nvvm", "libdevice", os.path.basename(libdevice)))
    return home


def first_existing(root, folders, pattern):
    for folder in folders:
        path = os.path.join(root, folder)
        try:
            names = sorted(os.listdir(path), key=len)
        except OSError:
            continue
        for name in names:
            if pattern.match(name):
                return os.path.realpath(os.path.join(path, name))
    return None


def configure_numba(cuda_home, cc):
    """Environment Numba reads at import: nothing from the caller's NUMBA_* (a stray
    NUMBA_ENABLE_CUDASIM would swap in the simulator), our toolkit folder, and the target.
    Numba 0.56 knows compute capabilities up to 8.6 and silently clamps anything higher;
    NUMBA_FORCE_CUDA_CC is the one setting that gets `.target sm_90`."""
    for key in [k for k in os.environ if k.startswith("NUMBA_") or k in ("CUDA_PATH",)]:
        del os.environ[key]
    os.environ["CUDA_HOME"] = cuda_home
    os.environ["NUMBA_FORCE_CUDA_CC"] = f"{cc[0]}.{cc[1]}"
    os.environ["NUMBA_COLOR_SCHEME"] = "no_color"


def check_toolkit_links(cuda_home):
    """Numba must use the links made above, not a library found elsewhere on the machine."""
    from numba.cuda.cuda_paths import get_cuda_paths
    paths = get_cuda_paths()
    for key in ("nvvm", "libdevice"):
        found = paths[key].info or ""
        if not found.startswith(cuda_home + os.sep):
            raise InternalError(f"Numba did not take {key} from the toolkit links")


def patch_numba(source_path):
    """The four places where Numba 0.56 does not fit CUDA 13 or the judge. `source_path` is the
    learner's file: only its functions carry line information."""
    from llvmlite import ir
    from numba.core import compiler, debuginfo, ir_utils, sigutils, untyped_passes
    from numba.core.errors import UnsupportedError
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.target_extension import target_override
    from numba.cuda import compiler as cuda_compiler, dispatcher as cuda_dispatcher
    from numba.cuda import target as cuda_target_module
    from numba.cuda.cudadrv import nvvm

    # 1. Numba stamps its IR "NVVM IR 1.6"; CUDA 13's libNVVM refuses anything but its own
    #    version (NVVM_ERROR_IR_VERSION_MISMATCH). Stamp what libNVVM reports (2.0, debug 3.2).
    def add_ir_version(module):
        i32 = ir.IntType(32)
        versions = nvvm.NVVM().get_ir_version()
        module.add_named_metadata("nvvmir.version", module.add_metadata([i32(v) for v in versions]))

    nvvm.add_ir_version = add_ir_version

    # 2. Line information. Numba's own `lineinfo=True` emits full DWARF: `.target sm_90, debug`,
    #    every function `noinline` (the kernel becomes a call to a .func: 54 registers and a
    #    stack frame instead of 18 registers for the stage 3 tree) and the Python error model.
    #    "Debug directives only" gives `.file`/`.loc` lines and the same code as no line info.
    class LineDirectivesOnly(debuginfo.DIBuilder):
        def mark_variable(self, *args, **kwargs):
            return None  # no variable locations: they need full debug info

        def mark_subprogram(self, function, *args, **kwargs):
            super().mark_subprogram(function, *args, **kwargs)
            function.attributes.discard("noinline")  # Numba adds it "for easier debugging"

        def _di_compile_unit(self):
            return self.module.add_debug_info("DICompileUnit", {
                "language": ir.DIToken("DW_LANG_C_plus_plus"),
                "file": self.difile,
                "producer": "cudojo (Numba)",
                "runtimeVersion": 0,
                "isOptimized": True,
                "emissionKind": ir.DIToken("DebugDirectivesOnly"),
            }, is_distinct=True)

    cuda_target_module.CUDATargetContext.DIBuilder = property(lambda self: LineDirectivesOnly)

    # 3. Every compile (the kernel and the device functions it calls) gets line directives and
    #    the NumPy error model (as in CUDA C++: x / 0.0 is inf, no hidden exception branches).
    #    Numba's own helpers written in Python (shfl_down_sync is one) get no line information,
    #    so what they inline into a kernel is attributed to the learner's calling line rather
    #    than to a second `.file`. Otherwise this is numba.cuda.compiler.compile_cuda.
    @global_compiler_lock
    def compile_cuda(pyfunc, return_type, args, debug=False, lineinfo=False, inline=False,
                     fastmath=False, nvvm_options=None):
        from numba.cuda.descriptor import cuda_target
        flags = cuda_compiler.CUDAFlags()
        flags.no_compile = True
        flags.no_cpython_wrapper = True
        flags.no_cfunc_wrapper = True
        flags.debuginfo = pyfunc.__code__.co_filename == source_path
        flags.error_model = "numpy"
        if inline:
            flags.forceinline = True
        if fastmath:
            flags.fastmath = True
        options = dict(nvvm_options or {})
        options.update(debug=False, lineinfo=True)
        options.setdefault("opt", 3)
        flags.nvvm_options = options
        with target_override("cuda"):
            cres = compiler.compile_extra(typingctx=cuda_target.typing_context,
                                          targetctx=cuda_target.target_context, func=pyfunc,
                                          args=args, return_type=return_type, flags=flags,
                                          locals={}, pipeline_class=cuda_compiler.CUDACompiler)
        cres.library.finalize()
        return cres

    cuda_compiler.compile_cuda = compile_cuda
    cuda_dispatcher.compile_cuda = compile_cuda

    # 4. Two places where Numba runs text as Python on the host: a closure that escapes becomes
    #    source with its captured values pasted in, then exec() (ir_utils, called from
    #    untyped_passes), and a signature string goes to eval() (sigutils). The source check
    #    refuses closures and signatures; these make sure neither path is there at all.
    def refuse_closure(*args, **kwargs):
        raise UnsupportedError("functions defined inside a kernel are not supported")

    def refuse_signature_text(*args, **kwargs):
        raise UnsupportedError("signature strings are not supported")

    ir_utils.convert_code_obj_to_function = refuse_closure
    untyped_passes.convert_code_obj_to_function = refuse_closure
    sigutils._parse_signature_string = refuse_signature_text
    return compile_cuda


# ---------------------------------------------------------------------------------------------
# Running the module: defines the functions, runs nothing else
# ---------------------------------------------------------------------------------------------

def run_module(tree, request):
    import builtins
    import types

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        # The policy allowed only these; this is the second lock on the same door.
        if level != 0 or name not in ALLOWED_MODULES:
            raise ImportError(f"`{name}` cannot be imported here")
        module = importlib.import_module(name)
        return module if fromlist else importlib.import_module(name.split(".")[0])

    kernel_builtins = {name: getattr(builtins, name) for name in KERNEL_BUILTINS}
    kernel_builtins["__import__"] = guarded_import
    module = types.ModuleType("submission")
    module.__dict__["__builtins__"] = kernel_builtins
    # The real path as the code's file name: Numba reads the source back from it (first body
    # line, error excerpts). Messages and PTX get the learner's file name instead.
    try:
        code = compile(tree, request["source_path"], "exec")
    except (RecursionError, MemoryError, SyntaxError, ValueError) as e:
        raise CompileError([(getattr(e, "lineno", 0) or 0, 0,
                             "Python cannot compile this file (an expression nested too deeply?): "
                             f"{type(e).__name__}")])
    try:
        exec(code, module.__dict__)
    except Exception as e:
        raise CompileError([(learner_line(e, request), 0, clean_message(
            f"{type(e).__name__}: {e}", request))])
    return module


def learner_line(error, request):
    """The line of the learner's file nearest the error in its traceback, or 0."""
    line = 0
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if frame.f_code.co_filename == request["source_path"]:
            line = lineno
    return line


# ---------------------------------------------------------------------------------------------
# Compiling the kernel
# ---------------------------------------------------------------------------------------------

def argument_types(request):
    from numba.core import types
    result = []
    for p in request["parameters"]:
        element = getattr(types, ELEMENT_TYPES[p["element"]])
        if p["kind"] == "array":
            # C-contiguous 1-D: Numba passes 7 values per array (PROTOCOL.md, "numba_arrays").
            # A const array is read-only, so a write to X is a compile error, as with const float*.
            result.append(types.Array(element, 1, "C", readonly=bool(p.get("const"))))
        else:
            result.append(element)
    return tuple(result)


def compile_kernel(module, request, compile_cuda, cc, def_line):
    """PTX for the stage's kernel; the learner's Numba errors become CompileError."""
    from numba.core import types
    from numba.core.errors import InternalError as NumbaInternalError, NumbaError
    from numba.cuda.dispatcher import CUDADispatcher

    kernel = module.__dict__.get(request["kernel"])
    if not isinstance(kernel, CUDADispatcher):
        raise InternalError("the kernel passed the source check but is not a cuda.jit kernel")
    fastmath = bool(kernel.targetoptions.get("fastmath"))
    options = {"debug": False, "lineinfo": True, "opt": 3, "fastmath": fastmath}
    try:
        cres = compile_cuda(kernel.py_func, None, argument_types(request), fastmath=fastmath,
                            nvvm_options=options)
        if cres.signature.return_type != types.none:
            raise CompileError([(def_line, 0,
                                 f"a kernel returns nothing, but `{request['kernel']}` returns "
                                 f"a {cres.signature.return_type}; write results to an array")])
        # debug=True here only gives the entry wrapper a subprogram, so the line directives of
        # the kernel body survive being inlined into it; libNVVM still gets no -g.
        library, _ = cres.target_context.prepare_cuda_kernel(
            cres.library, cres.fndesc, True, options, cres.type_annotation.filename,
            int(cres.type_annotation.linenum))
        return library.get_asm_str(cc=cc)
    except NumbaInternalError as e:
        # Numba wraps failures of its own machinery (libNVVM missing, a bug) this way: the
        # judge's side, not the learner's.
        raise InternalError(clean_message(str(e), request))
    except NumbaError as e:
        raise CompileError([(numba_error_line(e, request), 0, clean_message(str(e), request))])
    except RecursionError:
        raise CompileError([(def_line, 0, "the kernel nests too deeply for Numba to compile it; "
                                          "split long expressions")])


def numba_error_line(error, request):
    """Numba names places as `File "PATH", line N` and `at PATH (N)`, PATH relative to the
    working directory or not; the first one in the learner's file is the one the message is
    about. 0 when Numba names none."""
    text = str(error)
    places = re.findall(r'File "([^"]+)", line (\d+)', text)
    places += re.findall(r"at (\S+) \((\d+)\)", text)
    for path, line in places:
        if is_learner_path(path, request):
            return int(line)
    loc = getattr(error, "loc", None)
    if loc is not None and is_learner_path(str(getattr(loc, "filename", "")), request):
        return int(loc.line or 0)
    return 0


def is_learner_path(path, request):
    # Numba writes the path relative to the working directory when that is shorter.
    try:
        return os.path.abspath(path) == request["source_path"]
    except OSError:  # no working directory left
        return path == request["source_path"]


# Lines of Numba's messages that help nobody judging a kernel; the message ends at the first
# "During:" or source excerpt.
_DROP = re.compile(r"^(Failed in \S+ mode pipeline|This error may have been caused by|"
                   r"For more information|https?://|Enable logging at debug)")
_END = re.compile(r'^(During: |File "|There are \d+ candidate implementations|'
                  r"<source elided>|\s*\^)")
_SPECIFIC = "Rejected as the implementation raised a specific error:"


def clean_message(text, request):
    """The first meaningful lines of a Numba or Python message, in one line, without host paths
    or Numba's internals."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colour codes
    lines = text.splitlines()
    if "Cannot modify readonly array" in text:
        return readonly_message(request)
    kept = []
    for line in (line.strip() for line in lines):
        if _END.match(line) and kept:
            break
        if line and not _DROP.match(line) and not _END.match(line):
            kept.append(line)
    # "No implementation of function ... found for signature: >>> f(types)": Numba's own reason
    # is buried in its list of candidates; bring the first specific one up.
    for index, line in enumerate(lines):
        if _SPECIFIC in line and index + 1 < len(lines):
            kept.append("(" + lines[index + 1].strip() + ")")
            break
    message = " ".join(kept) if kept else "Numba could not compile the kernel"
    if "Cannot determine Numba type of <class 'function'>" in message:
        message += "; a function a kernel calls needs `@cuda.jit(device=True)`"
    message = re.sub(r"Function\(<built-in function (\w+)>\)", r"`\1`", message)
    message = re.sub(r"Function\(<function ([\w.]+) at 0x[0-9a-f]+>\)", r"`\1`", message)
    if "`shared.array`" in message or "`local.array`" in message:
        message += ("; the size must be a constant (0 for the launch's dynamic shared memory) "
                    "and dtype a numba type such as float32")
    message = message.replace(">>> ", "")
    return strip_paths(message, request)


def readonly_message(request):
    const = [p["name"] for p in request["parameters"] if p["kind"] == "array" and p.get("const")]
    others = [p["name"] for p in request["parameters"] if p["kind"] == "array"
              and not p.get("const")]
    where = f"; write results to {' or '.join(others)}" if others else ""
    return (f"{', '.join(const) or 'this array'} is read only (the stage passes it as a `const` "
            f"pointer in CUDA C++ terms){where}")


def strip_paths(message, request):
    """The learner's file by its name; any other path by its last part."""
    def rename(match):
        path = match.group(0)
        return request["file_name"] if is_learner_path(path, request) else os.path.basename(path)
    return re.sub(r"(?<![\w.])(?:\.{1,2})?/(?:[\w.+-]+/)*[\w.+-]+", rename, message)


# ---------------------------------------------------------------------------------------------
# The PTX: entry, file table, target
# ---------------------------------------------------------------------------------------------

ENTRY = re.compile(r"^\.visible\s+\.entry\s+([\w$]+)\s*\(", re.M)
FILE_DIRECTIVE = re.compile(r'^(\s*\.file\s+(\d+)\s+)"([^"]*)"(.*)$', re.M)


def finish_ptx(ptx, request):
    """Checks the target, finds the entry and the learner's `.file` index, and renames the files
    in the `.file` table (host paths there help nobody: the judge uses the index)."""
    target = re.search(r"^\.target\s+(\w+)", ptx, re.M)
    if not target or target.group(1) != request["arch"] or ".address_size 64" not in ptx:
        raise InternalError(f"Numba produced PTX for {target.group(1) if target else 'no target'}"
                            f", not {request['arch']}")
    entries = ENTRY.findall(ptx)
    if len(entries) != 1:
        raise InternalError(f"expected one .entry in Numba's PTX, found {len(entries)}")
    source_index = 0

    def rename(match):
        nonlocal source_index
        if is_learner_path(match.group(3), request):
            source_index = int(match.group(2))
            name = request["file_name"]
        else:
            name = "numba/" + os.path.basename(match.group(3))
        return f'{match.group(1)}"{name}"{match.group(4)}'

    ptx = FILE_DIRECTIVE.sub(rename, ptx)
    return ptx, entries[0], source_index


# ---------------------------------------------------------------------------------------------
# The answer
# ---------------------------------------------------------------------------------------------

def compile_error_answer(error, request):
    name = request["file_name"]
    diagnostics, log = [], []
    for line, column, message in error.diagnostics:
        diagnostics.append({"line": line, "column": column, "severity": "error",
                            "message": message})
        where = name + (f":{line}" if line else "") + (f":{column}" if line and column else "")
        log.append(f"{where}: error: {message}")
    return {"ok": False, "diagnostics": diagnostics, "log": "\n".join(log)}


def compile_request(request_path):
    request = read_request(request_path)
    try:
        with open(request["source_path"], "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InternalError(f"cannot read the submission: {type(e).__name__}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return request, CompileError([(raw[:e.start].count(b"\n") + 1, 0,
                                       "the file is not UTF-8 text")])
    try:
        tree, kernel_line = check_source(text, request)
    except CompileError as e:
        return request, e

    major, minor = divmod(int(request["arch"][3:]), 10)
    cc = (major, minor)
    with tempfile.TemporaryDirectory(prefix="cudojo-numba-") as work_dir:
        # An empty folder as the working directory: Numba reads `.numba_config.yaml` from it.
        os.chdir(work_dir)
        try:
            toolkit = link_toolkit(request["cuda_home"], work_dir)
            configure_numba(toolkit, cc)
            importlib.import_module("numba.cuda")  # after the environment: read at import
            check_toolkit_links(toolkit)
            compile_cuda = patch_numba(request["source_path"])
            module = run_module(tree, request)
            ptx = compile_kernel(module, request, compile_cuda, cc, kernel_line)
        except CompileError as e:
            return request, e
        finally:
            os.chdir("/")  # out of the folder before it is deleted
    ptx, entry, source_index = finish_ptx(ptx, request)
    answer = {"ok": True, "ptx": ptx, "entry": entry, "abi": "numba_arrays",
              "diagnostics": [], "log": ""}
    if source_index != 1:
        answer["source_file_index"] = source_index  # 0: no line information for the file
    return request, answer


def short_reason(text, request):
    """An internal error's first and last lines (numpy, for one, puts the cause last), without
    host paths where the request says which they are."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    text = lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"
    if isinstance(request, dict) and "source_path" in request:
        text = strip_paths(text, request)
    return text[:600]


def main(argv):
    # Anything below that writes to fd 1 (Numba, libNVVM) lands on stderr; the answer goes to
    # the saved stdout, alone.
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = None
    try:
        if len(argv) != 2:
            raise InternalError("usage: numba_frontend.py REQUEST.json")
        request, outcome = compile_request(argv[1])
        answer = compile_error_answer(outcome, request) if isinstance(outcome, CompileError) \
            else outcome
    except BaseException as e:  # noqa: B036 (one JSON object whatever happens, even exit())
        traceback.print_exc(file=sys.stderr)
        reason = str(e) if isinstance(e, InternalError) else f"{type(e).__name__}: {e}"
        try:
            reason = short_reason(reason, request)
        except Exception:
            reason = type(e).__name__
        answer = {"ok": False, "log": f"cudojo's Python front end failed: {reason}",
                  "diagnostics": [], "internal": True}
    with os.fdopen(answer_fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
