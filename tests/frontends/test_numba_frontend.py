"""Tests of src/compile/frontends/numba_frontend.py, the Python (Numba) front end.

Run from the repository root: `/usr/bin/python3 tests/frontends/test_numba_frontend.py`.
Each test runs the script as the judge does (`/usr/bin/python3 -I -B SCRIPT request.json`, a request
and a submission in a temporary folder), reads its one JSON answer and checks it. PTX is assembled
with the toolkit's ptxas. Needs Debian's python3-numba and the CUDA toolkit (CUDA_HOME or
/usr/local/cuda); no GPU. About 30 s.

The stages come from the course itself (every course/<track>/<stage>/stage.toml; course/course.toml
lists the tracks), and the corpus folders tests/submissions/<track>-<number>/ are matched to them
by stage id, so a new stage or corpus folder is tested without touching this file. Only a new
contract needs a line in CONTRACTS.
"""

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "src" / "compile" / "frontends" / "numba_frontend.py"
PYTHON = "/usr/bin/python3"  # Debian's: the one that sees python3-numba
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
PTXAS = os.path.join(CUDA_HOME, "bin", "ptxas")

# The contracts' parameters as the judge sends them (src/stage/contract_info.cc is the C++ side,
# src/compile/frontend.cc writes them into the request).
F32_IN = {"name": "X", "kind": "array", "element": "f32", "const": True}
N_I32 = {"name": "N", "kind": "scalar", "element": "i32"}
CONTRACTS = {
    "counter": [{"name": "c", "kind": "array", "element": "i32", "const": False}],
    "one_accumulator": [
        {"name": "X", "kind": "array", "element": "f32", "const": True},
        {"name": "out", "kind": "array", "element": "f32", "const": False},
        {"name": "N", "kind": "scalar", "element": "i32"},
    ],
    "partial_per_block": [
        {"name": "X", "kind": "array", "element": "f32", "const": True},
        {"name": "partial", "kind": "array", "element": "f32", "const": False},
        {"name": "N", "kind": "scalar", "element": "i32"},
    ],
    # The first of its two kernels; the second is SECOND_KERNELS' (the stage's second_kernel).
    "two_kernel_sum": [
        F32_IN,
        {"name": "partial", "kind": "array", "element": "f32", "const": False},
        N_I32,
    ],
    "u64_sum": [
        {"name": "X", "kind": "array", "element": "u32", "const": True},
        {"name": "out", "kind": "array", "element": "u64", "const": False},
        N_I32,
    ],
    "histogram": [
        {"name": "values", "kind": "array", "element": "u32", "const": True},
        {"name": "bins", "kind": "array", "element": "u32", "const": False},
        N_I32,
    ],
    "float_max": [
        F32_IN,
        {"name": "out", "kind": "array", "element": "f32", "const": False},
        N_I32,
    ],
}
# The second kernel of a two-kernel contract, named by the stage's `second_kernel`.
SECOND_KERNELS = {
    "two_kernel_sum": [
        {"name": "partial", "kind": "array", "element": "f32", "const": True},
        {"name": "out", "kind": "array", "element": "f32", "const": False},
        {"name": "count", "kind": "scalar", "element": "i32"},
    ],
}
# The Itanium code Numba mangles each element type into the entry's name (…5ArrayIfLi1E1C…).
MANGLED_ELEMENTS = {"f32": "f", "f64": "d", "i32": "i", "u32": "j", "i64": "l", "u64": "y"}

HEADER = "from numba import cuda, float32\n"
GOOD_KERNEL = """
@cuda.jit
def reduce(X, out, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < N:
        cuda.atomic.add(out, 0, X[i])
"""


@functools.cache
def missing_tools():
    if not os.path.exists(PYTHON):
        return f"{PYTHON} is missing"
    probe = subprocess.run([PYTHON, "-I", "-c", "import numba"], capture_output=True)
    if probe.returncode != 0:
        return "Debian's python3-numba is not installed"
    if not os.access(PTXAS, os.X_OK):
        return f"no ptxas under {CUDA_HOME} (set CUDA_HOME)"
    return None


class Run:
    """One run of the front end: the answer, the raw output, and the folder it ran in."""

    def __init__(self, answer, stdout, stderr, folder):
        self.answer, self.stdout, self.stderr, self.folder = answer, stdout, stderr, folder

    def lines(self):
        return [d["line"] for d in self.answer["diagnostics"]]


def run_frontend(test, source, kernel="reduce", parameters=None, cuda_home=CUDA_HOME,
                 prepare=None):
    """Writes the submission and request into a temporary folder, runs the script there and
    checks what holds for every answer: exit 0, one JSON object on stdout, no host paths."""
    parameters = CONTRACTS["one_accumulator"] if parameters is None else parameters
    with tempfile.TemporaryDirectory(prefix="cudojo-numba-test-") as folder:
        source_path = os.path.join(folder, "submission.py")
        with open(source_path, "w", encoding="utf-8") as f:
            f.write(source.replace("{folder}", folder))
        request = {"language": "python", "source_path": source_path, "file_name": "mine.py",
                   "kernel": kernel, "parameters": parameters, "arch": "sm_90",
                   "cuda_home": cuda_home}
        with open(os.path.join(folder, "request.json"), "w", encoding="utf-8") as f:
            json.dump(request, f)
        done = subprocess.run([PYTHON, "-I", "-B", str(SCRIPT),
                               os.path.join(folder, "request.json")],
                              capture_output=True, text=True, timeout=120, cwd=folder)
        test.assertEqual(done.returncode, 0, done.stderr[-2000:])
        test.assertTrue(done.stdout.endswith("\n") and done.stdout.count("\n") == 1,
                        f"stdout must be one JSON line: {done.stdout[:300]!r}")
        answer = json.loads(done.stdout)
        shown = answer.get("log", "") + json.dumps(answer.get("diagnostics", []))
        for secret in (folder, "/tmp/", "/usr/", "root:x:0:0", "dist-packages"):
            test.assertNotIn(secret, shown, "a host path or host file content reached the learner")
        test.assertNotIn(folder, answer.get("ptx", ""), "the job folder leaked into the PTX")
        test.assertNotIn("root:x:0:0", done.stdout + done.stderr)
        run = Run(answer, done.stdout, done.stderr, folder)
        if prepare:
            prepare(run)
        return run


def entry_parameters(ptx, entry):
    """The `.param` types of the entry, in order."""
    start = ptx.index(f".entry {entry}(")
    block = ptx[start:ptx.index(")", start)]
    return re.findall(r"\.param\s+\.(\w+)", block)


def ptxas_accepts(test, ptx):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        done = subprocess.run([PTXAS, "-arch=sm_90", f.name, "-o", os.devnull],
                              capture_output=True, text=True)
    test.assertEqual(done.returncode, 0, done.stderr[:2000])


def mangled_arrays(entry):
    """(element code, readonly or mutable) of each array parameter in Numba's mangled entry."""
    return re.findall(r"5ArrayI(\w)Li1E1C\d+(readonly|mutable)", entry)


@functools.cache
def stages():
    """(folder, kernels, corpus folder name) for every stage of every track, in course order;
    kernels is [(name, parameters)]: the stage's kernel, then its second_kernel if it has one."""
    tracks = tomllib.loads((ROOT / "course" / "course.toml").read_text())["tracks"]
    found = []
    for path in sorted((ROOT / "course").glob("*/*/stage.toml")):
        folder = path.parent
        stage = tomllib.loads(path.read_text())
        track, number = stage["id"].split("/")
        # The id names the folder it lives in: course/<track>/<number, two digits>-<slug>/.
        assert (folder.parent.name, f"{int(number):02d}") == (track, folder.name[:2]), path
        assert track in tracks, f"{path}: track {track} is not in course/course.toml"
        assert stage["contract"] in CONTRACTS, f"{path}: no parameters here for contract " \
                                               f"{stage['contract']}; add them to CONTRACTS"
        kernels = [(stage["kernel"], CONTRACTS[stage["contract"]])]
        second = SECOND_KERNELS.get(stage["contract"])
        assert bool(second) == ("second_kernel" in stage), \
            f"{path}: contract {stage['contract']} and second_kernel disagree"
        if second:
            kernels.append((stage["second_kernel"], second))
        found.append((tracks.index(track), int(number), folder, kernels, f"{track}-{number}"))
    assert {f[0] for f in found} == set(range(len(tracks))), "a track of course.toml has no stage"
    return [f[2:] for f in sorted(found, key=lambda f: f[:2])]


@unittest.skipIf(missing_tools(), missing_tools())
class CourseKernels(unittest.TestCase):
    def test_every_reference_and_starter_compiles_to_ptx_that_ptxas_accepts(self):
        compiled = set()
        for folder, kernels, _ in stages():
            for name in ("reference.py", "starter.py"):
                for kernel, parameters in kernels:  # a two-kernel stage: each kernel, one build
                    with self.subTest(stage=f"{folder.parent.name}/{folder.name}", file=name,
                                      kernel=kernel):
                        run = run_frontend(self, (folder / name).read_text(), kernel, parameters)
                        answer = run.answer
                        self.assertTrue(answer["ok"], answer.get("log"))
                        self.assertEqual(answer["abi"], "numba_arrays")
                        self.assertRegex(answer["ptx"], r"(?m)^\.target sm_90$")
                        self.assertRegex(answer["ptx"],
                                         rf"(?m)^\.visible \.entry {answer['entry']}\(")
                        # mangled: _ZN6cudapy10submission7sum_u32B2v1...
                        self.assertIn(f"{len(kernel)}{kernel}B", answer["entry"])
                        arrays = [p for p in parameters if p["kind"] == "array"]
                        scalars = [p for p in parameters if p["kind"] == "scalar"]
                        self.assertEqual(parameters, arrays + scalars)  # the contracts' order
                        self.assertEqual({p["element"] for p in scalars} - {"i32"}, set())
                        # 7 .u64 per array whatever its element (meminfo, parent, nitems,
                        # itemsize, data, shape, stride), then one .u32 per int32.
                        self.assertEqual(entry_parameters(answer["ptx"], answer["entry"]),
                                         ["u64"] * 7 * len(arrays) + ["u32"] * len(scalars))
                        # The arrays were typed as the contract says: element and read only.
                        self.assertEqual(mangled_arrays(answer["entry"]),
                                         [(MANGLED_ELEMENTS[p["element"]],
                                           "readonly" if p["const"] else "mutable")
                                          for p in arrays])
                        ptxas_accepts(self, answer["ptx"])
                        compiled.add((folder, name, kernel))
        # Every stage of every track, both files, every kernel: nothing was skipped.
        self.assertEqual(len(compiled), 2 * sum(len(kernels) for _, kernels, _ in stages()))

    def test_barriers_carry_the_line_of_the_learners_syncthreads(self):
        source = (ROOT / "course/reduction/03-block-tree/reference.py").read_text()
        barrier_lines = {n for n, text in enumerate(source.splitlines(), 1)
                         if "cuda.syncthreads()" in text}
        answer = run_frontend(self, source).answer
        index = answer.get("source_file_index", 1)
        self.assertRegex(answer["ptx"], rf'(?m)^\s*\.file\s+{index}\s+"mine\.py"')
        current, seen = None, []
        for line in answer["ptx"].splitlines():
            loc = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", line)
            if loc and int(loc.group(1)) == index:
                current = int(loc.group(2))
            if "bar.sync" in line:
                seen.append(current)
        self.assertTrue(seen, "no bar.sync in the stage 3 reference")
        self.assertEqual(set(seen), barrier_lines)

    def test_a_write_to_the_read_only_input_is_a_compile_error(self):
        answer = run_frontend(self, HEADER + GOOD_KERNEL.replace(
            "cuda.atomic.add(out, 0, X[i])", "X[i] = 0.0")).answer
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["diagnostics"][0]["line"], 7)
        self.assertIn("X is read only", answer["diagnostics"][0]["message"])


@unittest.skipIf(missing_tools(), missing_tools())
class CompileErrors(unittest.TestCase):
    def test_syntax_error_names_its_line(self):
        source = HEADER + GOOD_KERNEL.replace("if i < N:", "if i < N")
        answer = run_frontend(self, source).answer
        self.assertFalse(answer["ok"])
        self.assertNotIn("internal", answer)
        self.assertEqual(answer["diagnostics"][0]["line"], 6)
        self.assertIn("mine.py:6:", answer["log"])

    def test_an_expression_too_deep_to_compile_is_the_learners_error(self):
        # Python's compiler recurses on a long chain of additions; that is the file, not the judge.
        long_sum = " + ".join(["X[i]"] * 1000)
        source = HEADER + GOOD_KERNEL.replace("X[i])", f"{long_sum})")
        answer = run_frontend(self, source).answer
        self.assertFalse(answer["ok"])
        self.assertNotIn("internal", answer, answer["log"])

    def test_typing_error_names_the_learners_line_without_host_paths(self):
        source = HEADER + GOOD_KERNEL.replace("X[i])", "X[j])")
        run = run_frontend(self, source)
        answer = run.answer
        self.assertFalse(answer["ok"])
        self.assertNotIn("internal", answer)
        self.assertEqual(answer["diagnostics"][0]["line"], 7)
        self.assertIn("name 'j' is not defined", answer["log"])
        self.assertTrue(answer["log"].startswith("mine.py:7: error: "), answer["log"])
        self.assertNotIn("This error may have been caused", answer["log"])
        self.assertNotIn("numba/core", answer["log"])

    def test_a_wrong_parameter_count_says_the_stage_signature(self):
        answer = run_frontend(self, HEADER + GOOD_KERNEL.replace("(X, out, N)", "(X, out)")).answer
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["diagnostics"][0]["line"], 4)
        self.assertIn("the stage launches `reduce(X, out, N)`: X float32 array (read only), "
                      "out float32 array, N int32", answer["log"])

    def test_a_missing_kernel_says_the_stage_signature(self):
        answer = run_frontend(self, HEADER + GOOD_KERNEL.replace("def reduce", "def reduction")
                              ).answer
        self.assertFalse(answer["ok"])
        self.assertIn("no kernel named `reduce`", answer["log"])
        self.assertIn("`reduce(X, out, N)`", answer["log"])

    def test_a_toolkit_without_libnvvm_is_an_internal_error(self):
        with tempfile.TemporaryDirectory() as empty:
            answer = run_frontend(self, HEADER + GOOD_KERNEL, cuda_home=empty).answer
        self.assertFalse(answer["ok"])
        self.assertTrue(answer["internal"])
        self.assertTrue(answer["log"].startswith("cudojo's Python front end failed: "))


# Hostile files. Each would leave {folder}/ran if any of it ran on the host; each must be refused
# with a diagnostic on the given line, and the marker must not exist afterwards.
REFUSED = {
    "module_level_open": (HEADER + 'open("{folder}/ran", "w").write(open("/etc/passwd").read())\n'
                          + GOOD_KERNEL, 2, "calls `open`"),
    "dunder_import": (HEADER + '__import__("os").system("touch {folder}/ran")\n' + GOOD_KERNEL,
                      2, "`__import__` is refused"),
    "import_os": ("import os\n" + HEADER + GOOD_KERNEL, 1, "only `from numba import cuda`"),
    "os_system": (HEADER + "from os import system\nsystem('touch {folder}/ran')\n" + GOOD_KERNEL,
                  2, "may be imported"),
    "decorator_print": (HEADER + GOOD_KERNEL.replace("@cuda.jit", "@print\n@cuda.jit"), 3,
                        "decorators run on the host"),
    "decorator_calls_a_function": (
        HEADER + "def some_func(x):\n    return x\n"
        + GOOD_KERNEL.replace("@cuda.jit", "@some_func(open('{folder}/ran', 'w'))"), 5,
        "decorators run on the host"),
    "default_argument_call": (
        HEADER + "@cuda.jit(device=True)\ndef f(x=open('/etc/passwd')):\n    return x\n"
        + GOOD_KERNEL, 3, "default values run on the host"),
    "annotation_call": (HEADER + GOOD_KERNEL.replace("(X, out, N)",
                                                     "(X: open('{folder}/ran', 'w'), out, N)"),
                        4, "annotations are refused"),
    "class_bases_trick": (HEADER + "T = ().__class__.__bases__[0].__subclasses__()\n"
                          + GOOD_KERNEL, 2, "`__class__` is refused"),
    "dunder_in_kernel_body": (HEADER + GOOD_KERNEL.replace(
        "if i < N:", "g = X.__class__\n    if i < N:"), 6, "`__class__` is refused"),
    "exec_at_top_level": (HEADER + "exec(\"open('{folder}/ran', 'w')\")\n" + GOOD_KERNEL, 2,
                          "calls `exec`"),
    "eval_in_kernel": (HEADER + GOOD_KERNEL.replace("if i < N:", "eval('1')\n    if i < N:"), 6,
                       "`eval` is refused"),
    "signature_string_numba_would_eval": (
        HEADER + GOOD_KERNEL.replace("@cuda.jit", "@cuda.jit(\"__import__('os').system("
                                                  "'touch {folder}/ran')\")"), 3,
        "takes no signature"),
    "jit_link_reads_host_files": (HEADER + GOOD_KERNEL.replace(
        "@cuda.jit", "@cuda.jit(link=['/etc/passwd'])"), 3, "is refused"),
    "huge_constant": (HEADER + "BIG = 10 ** 10 ** 10\n" + GOOD_KERNEL, 2, "too large"),
    # Numba 0.56 turns an escaping closure into source with its captured values pasted in and
    # exec()s it: this string would run on the host (checked: it does, without the refusal).
    "closure_capturing_a_string": (
        HEADER + "@cuda.jit(device=True)\ndef apply(g, v):\n    return g(v)\n"
        + GOOD_KERNEL.replace(
            "if i < N:",
            "s = \"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "
            "'_wrap_close'][0].__init__.__globals__['system']('touch {folder}/ran')\"\n"
            "    def inner(a):\n        return len(s) + a\n"
            "    i += apply(inner, 0)\n    if i < N:"),
        10, "inside a kernel are refused"),
    "comprehension_in_kernel": (HEADER + GOOD_KERNEL.replace(
        "if i < N:", "t = sum([k for k in range(3)])\n    if i < N:"), 6,
        "inside a kernel are refused"),
    "host_api_in_kernel": (HEADER + GOOD_KERNEL.replace(
        "if i < N:", "d = cuda.to_device(X)\n    if i < N:"), 6, "host API"),
}


@unittest.skipIf(missing_tools(), missing_tools())
class HostileFiles(unittest.TestCase):
    def test_each_is_refused_at_its_line_before_anything_runs(self):
        for name, (source, line, reason) in REFUSED.items():
            with self.subTest(name):
                ran = []
                run = run_frontend(self, source, prepare=lambda r: ran.append(
                    os.path.exists(os.path.join(r.folder, "ran"))))
                answer = run.answer
                self.assertFalse(answer["ok"], name)
                self.assertNotIn("internal", answer, answer["log"])
                self.assertIn(line, run.lines(), answer["log"])
                self.assertIn(reason, answer["log"])
                self.assertEqual(ran, [False], "learner code ran on the host")

    def test_the_corpus_files_are_refused_or_accepted_as_their_first_line_says(self):
        by_corpus_folder = {corpus: kernels for _, kernels, corpus in stages()}
        corpus = ROOT / "tests" / "submissions"
        folders = sorted(p.name for p in corpus.iterdir() if p.is_dir())
        # Every corpus folder is <track>-<number> of a stage the course has.
        self.assertEqual(sorted(set(folders) - set(by_corpus_folder)), [])
        paths = sorted(corpus.glob("*/*.py"))
        self.assertTrue(paths)
        for path in paths:
            with self.subTest(f"{path.parent.name}/{path.name}"):
                first_line = path.read_text().splitlines()[0]
                self.assertRegex(first_line, r"^# expect: verdict=\w+")
                compile_error = "verdict=compile_error" in first_line
                # The judge builds each kernel of the stage; the file fails to compile if any fails.
                answers = [run_frontend(self, path.read_text(), kernel, parameters).answer
                           for kernel, parameters in by_corpus_folder[path.parent.name]]
                for answer in answers:
                    self.assertNotIn("internal", answer, answer.get("log"))
                self.assertEqual(all(a["ok"] for a in answers), not compile_error,
                                 [a.get("log") for a in answers])


@unittest.skipIf(missing_tools() or not shutil.which("bwrap"), "needs bwrap and the toolkit")
class Sandbox(unittest.TestCase):
    def test_it_compiles_with_only_the_toolkit_and_an_empty_tmp(self):
        """As the judge runs it: read-only /usr with /usr/local hidden, the toolkit at another
        path, an empty /tmp, the job at /job, no network."""
        with tempfile.TemporaryDirectory() as job:
            shutil.copy(SCRIPT, job)
            shutil.copy(ROOT / "course/reduction/04-warp-shuffle/reference.py",
                        os.path.join(job, "submission.py"))
            request = {"language": "python", "source_path": "/job/submission.py",
                       "file_name": "mine.py", "kernel": "block_sum",
                       "parameters": CONTRACTS["partial_per_block"], "arch": "sm_90",
                       "cuda_home": "/opt/cuda"}
            with open(os.path.join(job, "request.json"), "w") as f:
                json.dump(request, f)
            command = ["bwrap", "--ro-bind", "/usr", "/usr", "--tmpfs", "/usr/local",
                       "--ro-bind", os.path.realpath(CUDA_HOME), "/opt/cuda",
                       "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                       "--symlink", "usr/bin", "/bin", "--tmpfs", "/tmp", "--bind", job, "/job",
                       "--chdir", "/job", "--setenv", "HOME", "/job", "--unshare-all",
                       "--die-with-parent", "--proc", "/proc", "--dev", "/dev"]
            if os.path.isdir("/etc/alternatives"):  # Debian's numpy finds libblas through it
                command += ["--ro-bind", "/etc/alternatives", "/etc/alternatives"]
            probe = subprocess.run(command + ["/usr/bin/true"], capture_output=True)
            if probe.returncode != 0:
                self.skipTest(f"bwrap cannot make a sandbox here: {probe.stderr[:200]!r}")
            done = subprocess.run(command + [PYTHON, "-I", "-B", "/job/numba_frontend.py",
                                             "/job/request.json"],
                                  capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        answer = json.loads(done.stdout)
        self.assertTrue(answer["ok"], answer.get("log"))
        self.assertRegex(answer["ptx"], r"(?m)^\.target sm_90$")
        self.assertIn('"mine.py"', answer["ptx"])


if __name__ == "__main__":
    unittest.main()
