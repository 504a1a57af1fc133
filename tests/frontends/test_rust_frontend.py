"""Tests for src/compile/frontends/rust_frontend.py, run the way the judge runs it (without the
sandbox): `/usr/bin/python3 -I rust_frontend.py request.json`, one JSON answer on stdout.

Run from the repository root: /usr/bin/python3 tests/frontends/test_rust_frontend.py
The sysroot (core for nvptx64) is built once into a temporary folder (about 20 s); set
CUDOJO_TEST_RUST_SYSROOT=/some/dir to build it there once and reuse it on later runs.
Needs Debian's rustc-web and rust-web-src; ptxas (/usr/local/cuda/bin/ptxas) checks the PTX.

The stages come from the course itself (every course/<track>/<stage>/stage.toml; course/course.toml
lists the tracks), and the corpus folders tests/submissions/<track>-<number>/ are matched to them
by stage id, so a new stage or corpus folder is tested without touching this file. Only a new
contract needs a line in CONTRACTS.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "src", "compile", "frontends", "rust_frontend.py")
PRELUDE = os.path.join(REPO, "src", "compile", "frontends", "cudojo_prelude.rs")
COURSE = os.path.join(REPO, "course")
CORPUS = os.path.join(REPO, "tests", "submissions")
PYTHON = "/usr/bin/python3"
PTXAS = "/usr/local/cuda/bin/ptxas"
ARCH = "sm_90"

# The contracts' parameters as the judge sends them (src/stage/contract_info.cc is the C++ side,
# src/compile/frontend.cc writes them into the request).
F32_IN = {"name": "X", "kind": "array", "element": "f32", "const": True}
F32_OUT = {"name": "out", "kind": "array", "element": "f32", "const": False}
F32_PARTIAL = {"name": "partial", "kind": "array", "element": "f32", "const": False}
N_I32 = {"name": "N", "kind": "scalar", "element": "i32"}
CONTRACTS = {
    "counter": [{"name": "c", "kind": "array", "element": "i32", "const": False}],
    "one_accumulator": [F32_IN, F32_OUT, N_I32],
    "partial_per_block": [F32_IN, F32_PARTIAL, N_I32],
    # The first of its two kernels; the second is SECOND_KERNELS' (the stage's second_kernel).
    "two_kernel_sum": [F32_IN, F32_PARTIAL, N_I32],
    "u64_sum": [{"name": "X", "kind": "array", "element": "u32", "const": True},
                {"name": "out", "kind": "array", "element": "u64", "const": False}, N_I32],
    "histogram": [{"name": "values", "kind": "array", "element": "u32", "const": True},
                  {"name": "bins", "kind": "array", "element": "u32", "const": False}, N_I32],
    "float_max": [F32_IN, F32_OUT, N_I32],
}
# The second kernel of a two-kernel contract, named by the stage's `second_kernel`.
SECOND_KERNELS = {
    "two_kernel_sum": [{"name": "partial", "kind": "array", "element": "f32", "const": True},
                       F32_OUT, {"name": "count", "kind": "scalar", "element": "i32"}],
}
# The .param type the PTX gives each parameter: any pointer is .u64, an i32 or u32 a .u32.
PARAM_TYPES = {"i32": "u32", "u32": "u32"}


def param_shape(parameters):
    """The .param list of a kernel taking `parameters`."""
    return ["u64" if p["kind"] == "array" else PARAM_TYPES[p["element"]] for p in parameters]


def load_stages():
    """(folder, kernels, corpus folder name) for every stage of every track, in course order;
    kernels is [(name, parameters)]: the stage's kernel, then its second_kernel if it has one."""
    with open(os.path.join(COURSE, "course.toml"), "rb") as f:
        tracks = tomllib.load(f)["tracks"]
    found = []
    for track in sorted(os.listdir(COURSE)):
        if not os.path.isdir(os.path.join(COURSE, track)):
            continue  # course.toml
        for name in sorted(os.listdir(os.path.join(COURSE, track))):
            path = os.path.join(COURSE, track, name, "stage.toml")
            if not os.path.isfile(path):
                continue  # course/languages/ and the like
            with open(path, "rb") as f:
                stage = tomllib.load(f)
            stage_track, number = stage["id"].split("/")
            # The id names the folder it lives in: course/<track>/<number, two digits>-<slug>/.
            assert (stage_track, f"{int(number):02d}") == (track, name[:2]), path
            assert track in tracks, f"{path}: track {track} is not in course/course.toml"
            assert stage["contract"] in CONTRACTS, \
                f"{path}: no parameters here for contract {stage['contract']}; add them to CONTRACTS"
            kernels = [(stage["kernel"], CONTRACTS[stage["contract"]])]
            second = SECOND_KERNELS.get(stage["contract"])
            assert bool(second) == ("second_kernel" in stage), \
                f"{path}: contract {stage['contract']} and second_kernel disagree"
            if second:
                kernels.append((stage["second_kernel"], second))
            found.append((tracks.index(track), int(number), f"{track}/{name}", kernels,
                          f"{track}-{number}"))
    assert {f[0] for f in found} == set(range(len(tracks))), "a track of course.toml has no stage"
    return [f[2:] for f in sorted(found, key=lambda f: f[:2])]


STAGES = load_stages()
HOST_PATH = re.compile(r"/(usr|tmp|job|home|root|etc|work|sysroot)/")

GOOD_REDUCE = """\
#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        atomic_add_f32(out, *x.add(i as usize));
    }
}
"""


def entry_params(ptx, name):
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    return re.findall(r"\.param\s+\.(\w+)", m.group(1)) if m else None


def code_lines(ptx):
    """The PTX without comments, blank lines and line directives: what the GPU runs."""
    lines = []
    for line in ptx.split("\n"):
        line = line.split("//", 1)[0].strip()
        if line and not line.startswith((".loc", ".file")):
            lines.append(line)
    return lines


class RustFrontend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cudojo-rust-test-")
        cls.sysroot = os.environ.get("CUDOJO_TEST_RUST_SYSROOT") or os.path.join(cls.tmp, "sr")
        started = time.monotonic()
        out = subprocess.run([PYTHON, "-I", SCRIPT, "--build-sysroot", cls.sysroot, "--arch", ARCH],
                             capture_output=True, text=True, timeout=900)
        cls.sysroot_seconds = time.monotonic() - started
        cls.sysroot_answer = json.loads(out.stdout)
        cls.sysroot_status = out.returncode
        cls.job = os.path.join(cls.tmp, "job")
        os.makedirs(cls.job)
        shutil.copy(PRELUDE, os.path.join(cls.job, "cudojo_prelude.rs"))
        # A file only this test knows: its text must never come back from the front end.
        cls.secret = os.path.join(cls.tmp, "secret.txt")
        with open(cls.secret, "w") as f:
            f.write("cudojo-secret-7f3a9c\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_frontend(self, source, kernel="reduce", file_name="mine.rs", sysroot=None,
                     parameters=None):
        with open(os.path.join(self.job, "submission.rs"), "w") as f:
            f.write(source)
        request = {
            "language": "rust",
            "source_path": os.path.join(self.job, "submission.rs"),
            "file_name": file_name,
            "kernel": kernel,
            "parameters": CONTRACTS["one_accumulator"] if parameters is None else parameters,
            "arch": ARCH,
            "cuda_home": "/usr/local/cuda",
            "rust_sysroot": sysroot or self.sysroot,
            "prelude_path": os.path.join(self.job, "cudojo_prelude.rs"),
        }
        with open(os.path.join(self.job, "request.json"), "w") as f:
            json.dump(request, f)
        out = subprocess.run([PYTHON, "-I", SCRIPT, os.path.join(self.job, "request.json")],
                             capture_output=True, text=True, timeout=300, cwd=self.job)
        self.assertEqual(out.stdout.count("\n"), 1, "stdout must be exactly one JSON line")
        answer = json.loads(out.stdout)
        answer["_status"] = out.returncode
        answer["_stdout"] = out.stdout
        return answer

    def compile_ok(self, source, kernel="reduce", parameters=None):
        answer = self.run_frontend(source, kernel, parameters=parameters)
        self.assertTrue(answer["ok"], answer["log"])
        self.assertEqual(answer["_status"], 0)
        self.assertNotIn("internal", answer)
        return answer

    def compile_error(self, source, kernel="reduce", parameters=None):
        return self.assert_compile_error(self.run_frontend(source, kernel, parameters=parameters))

    def assert_compile_error(self, answer):
        self.assertFalse(answer["ok"], "expected a compile error")
        self.assertEqual(answer["_status"], 0)
        self.assertNotIn("internal", answer, answer["log"])
        errors = [d for d in answer["diagnostics"] if d["severity"] == "error"]
        self.assertTrue(errors, answer)
        self.assertNotRegex(answer["log"], HOST_PATH)
        for d in answer["diagnostics"]:
            self.assertNotRegex(d["message"], HOST_PATH)
        return answer, errors

    def assert_ptxas_accepts(self, ptx, name):
        if not os.path.exists(PTXAS):
            self.skipTest("no ptxas")
        path = os.path.join(self.tmp, name + ".ptx")
        with open(path, "w") as f:
            f.write(ptx)
        out = subprocess.run([PTXAS, f"-arch={ARCH}", path, "-o", os.devnull],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, f"ptxas refused {name}: {out.stderr}")

    # --- the sysroot ---------------------------------------------------------------------------

    def test_sysroot_is_stamped_and_a_second_build_is_a_no_op(self):
        self.assertEqual(self.sysroot_status, 0, self.sysroot_answer)
        self.assertTrue(self.sysroot_answer["ok"], self.sysroot_answer)
        with open(os.path.join(self.sysroot, "cudojo-sysroot.stamp")) as f:
            stamp = f.read()
        version = subprocess.run(["/usr/bin/rustc", "--version"], capture_output=True,
                                 text=True).stdout.strip()
        self.assertIn(version, stamp)
        self.assertIn(f"arch: {ARCH}", stamp)
        libdir = os.path.join(self.sysroot, "lib", "rustlib", "nvptx64-nvidia-cuda", "lib")
        self.assertTrue(os.path.isfile(os.path.join(libdir, "libcore.rlib")))
        self.assertTrue(os.path.isfile(os.path.join(libdir, "libcompiler_builtins.rlib")))
        leftovers = [name for name in os.listdir(os.path.dirname(self.sysroot))
                     if ".building-" in name]
        self.assertEqual(leftovers, [], "the build leaves no temporary folder behind")
        started = time.monotonic()
        out = subprocess.run(
            [PYTHON, "-I", SCRIPT, "--build-sysroot", self.sysroot, "--arch", ARCH],
            capture_output=True, text=True, timeout=900)
        self.assertTrue(json.loads(out.stdout)["ok"])
        self.assertIn("up to date", json.loads(out.stdout)["log"])
        self.assertLess(time.monotonic() - started, 5)

    def test_a_missing_sysroot_is_the_judges_failure_not_the_learners(self):
        empty = os.path.join(self.tmp, "empty-sysroot")
        os.makedirs(empty, exist_ok=True)
        answer = self.run_frontend(GOOD_REDUCE, sysroot=empty)
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["_status"], 0)
        self.assertIs(answer["internal"], True)
        self.assertIn("stale", answer["log"])

    # --- the course's kernels -------------------------------------------------------------------

    def test_every_starter_and_reference_compiles_to_a_plain_entry_that_ptxas_accepts(self):
        compiled = set()
        for stage, kernels, _ in STAGES:
            for which in ("starter", "reference"):
                with open(os.path.join(COURSE, stage, which + ".rs")) as f:
                    source = f.read()
                for kernel, parameters in kernels:  # a two-kernel stage: each kernel, one build
                    with self.subTest(stage=stage, file=which, kernel=kernel):
                        answer = self.compile_ok(source, kernel, parameters)
                        ptx = answer["ptx"]
                        self.assertEqual(answer["entry"], kernel)
                        self.assertEqual(answer["abi"], "plain")
                        self.assertEqual(entry_params(ptx, kernel), param_shape(parameters))
                        self.assertRegex(ptx, r"(?m)^\.target sm_90$")
                        self.assertRegex(ptx, r"(?m)^\.address_size 64$")
                        self.assertNotRegex(ptx, HOST_PATH)
                        self.assertEqual(answer["diagnostics"], [], answer["log"])
                        self.assert_ptxas_accepts(
                            ptx, f"{stage.replace('/', '-')}-{which}-{kernel}")
                        compiled.add((stage, which, kernel))
        # Every stage of every track, both files, every kernel: nothing was skipped.
        self.assertEqual(len(compiled), 2 * sum(len(kernels) for _, kernels, _ in STAGES))

    def test_corpus_files_meet_their_expectation_line(self):
        by_corpus_folder = {corpus: kernels for _, kernels, corpus in STAGES}
        folders = sorted(name for name in os.listdir(CORPUS)
                         if os.path.isdir(os.path.join(CORPUS, name)))
        # Every corpus folder is <track>-<number> of a stage the course has.
        self.assertEqual(sorted(set(folders) - set(by_corpus_folder)), [])
        count = 0
        for folder in folders:
            directory = os.path.join(CORPUS, folder)
            for name in sorted(os.listdir(directory)):
                if not name.endswith(".rs"):
                    continue
                count += 1
                with self.subTest(file=f"{folder}/{name}"):
                    with open(os.path.join(directory, name)) as f:
                        source = f.read()
                    expect = re.match(r"// expect: verdict=(\w+)", source)
                    self.assertIsNotNone(expect, "the first line must be `// expect: ...`")
                    kernels = by_corpus_folder.get(folder, [])
                    if expect.group(1) == "compile_error":
                        # The judge builds each kernel of the stage; one refused fails the file.
                        answers = [self.run_frontend(source, kernel, parameters=parameters)
                                   for kernel, parameters in kernels]
                        self.assertFalse(all(a["ok"] for a in answers), "every kernel compiled")
                        for answer in answers:
                            if answer["ok"]:
                                self.assertNotIn("internal", answer)
                            else:
                                self.assert_compile_error(answer)
                    else:
                        race = re.search(r"shared_race@(\d+)", source.split("\n")[0])
                        race_lines = []
                        for kernel, parameters in kernels:
                            answer = self.compile_ok(source, kernel, parameters)
                            self.assertEqual(answer["entry"], kernel)
                            self.assertEqual(entry_params(answer["ptx"], kernel),
                                             param_shape(parameters))
                            self.assert_ptxas_accepts(answer["ptx"], f"{folder}-{name}-{kernel}")
                            if race:
                                race_lines += self.loc_lines_of(answer, r"^\s*(ld|st)\.b32\s")
                        if race:  # the racing line is where the fold reads and writes s
                            self.assertIn(int(race.group(1)), race_lines)
        rust_files = [name for folder in folders
                      for name in os.listdir(os.path.join(CORPUS, folder)) if name.endswith(".rs")]
        self.assertTrue(rust_files)
        self.assertEqual(count, len(rust_files))

    # --- line information -----------------------------------------------------------------------

    def loc_lines_of(self, answer, instruction):
        """The learner lines the PTX gives the instructions matching `instruction`."""
        index = answer["source_file_index"]
        current = None
        lines = []
        for line in answer["ptx"].split("\n"):
            m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", line)
            if m:
                current = (int(m.group(1)), int(m.group(2)))
            elif re.match(instruction, line):
                self.assertIsNotNone(current, f"no .loc before {line!r}")
                self.assertEqual(current[0], index, f"{line!r} is not on a learner line")
                lines.append(current[1] - answer["line_offset"])
        return lines

    def test_barriers_atomics_and_shuffles_carry_the_learners_lines(self):
        for stage, kernel, contract in (("03-block-tree", "reduce", "one_accumulator"),
                                        ("04-warp-shuffle", "block_sum", "partial_per_block")):
            with self.subTest(stage=stage):
                with open(os.path.join(COURSE, "reduction", stage, "reference.rs")) as f:
                    source = f.read()
                answer = self.compile_ok(source, kernel, CONTRACTS[contract])
                self.assertRegex(answer["ptx"],
                                 r'\.file\s+%d\s+"mine\.rs"' % answer["source_file_index"])

                def lines_with(text):
                    return {k + 1 for k, line in enumerate(source.split("\n")) if text in line}

                barriers = self.loc_lines_of(answer, r"\s*bar\.sync\b")
                self.assertTrue(barriers)
                self.assertLessEqual(set(barriers), lines_with("sync_threads()"))
                if kernel == "reduce":
                    self.assertEqual(set(self.loc_lines_of(answer, r"\s*atom\.")),
                                     lines_with("atomic_add_f32("))
                else:  # the shuffles sit in warp_fold, a learner function inlined twice
                    self.assertEqual(set(self.loc_lines_of(answer, r"\s*shfl\.sync")),
                                     lines_with("shfl_down_sync("))

    def test_verbose_asm_only_adds_comments(self):
        # The front end reads rustc's -Z verbose-asm remarks; they must not change the code.
        spec = importlib.util.spec_from_file_location("rust_frontend", SCRIPT)
        frontend = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(frontend)
        with open(os.path.join(COURSE, "reduction", "04-warp-shuffle", "reference.rs")) as f:
            source = f.read()
        with open(PRELUDE) as f:
            root, _ = frontend.build_crate(source, "block_sum", CONTRACTS["partial_per_block"],
                                           f.read())
        ptx = {}
        for verbose in (True, False):
            work = tempfile.mkdtemp(dir=self.tmp)
            with open(os.path.join(work, frontend.ROOT_NAME), "w") as f:
                f.write(root)
            out = subprocess.run(frontend.rustc_command(self.sysroot, ARCH, work, verbose),
                                 cwd=work, env=frontend.rustc_env(work), capture_output=True,
                                 text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(os.path.join(work, "kernel.ptx")) as f:
                ptx[verbose] = f.read()
        self.assertIn("@[", ptx[True])
        self.assertEqual(code_lines(ptx[True]), code_lines(ptx[False]))

    # --- compile errors -------------------------------------------------------------------------

    def test_a_type_error_is_reported_at_the_learners_line_without_host_paths(self):
        source = GOOD_REDUCE.replace("    if i < n {\n",
                                     "    let wrong: u32 = 1.5;\n    if i < n {\n")
        answer, errors = self.compile_error(source)
        self.assertEqual((errors[0]["line"], errors[0]["column"]), (4, 22))
        self.assertIn("mismatched types", errors[0]["message"])
        self.assertTrue(answer["log"].startswith("mine.rs:4:22: error:"), answer["log"])
        self.assertNotIn("cudojo_kernel", answer["_stdout"])

    def test_a_syntax_error_is_reported_at_its_line(self):
        source = GOOD_REDUCE.replace("    if i < n {", "    let = 3;\n    if i < n {")
        answer, errors = self.compile_error(source)
        self.assertEqual(errors[0]["line"], 4, answer["log"])

    def test_an_unknown_name_is_reported_at_its_line_and_column(self):
        source = GOOD_REDUCE.replace("*x.add(i as usize)", "*x.add(j as usize)")
        _, errors = self.compile_error(source)
        self.assertEqual((errors[0]["line"], errors[0]["column"]), (5, 36))
        self.assertIn("`j`", errors[0]["message"])

    def test_a_wrong_parameter_list_names_what_the_stage_launches(self):
        for wrong in ("out: *mut f64, n: i32", "out: *mut f32, n: u32", "out: *mut f32",
                      "out: *mut f32, n: i32, extra: i32"):
            with self.subTest(parameters=wrong):
                source = ("// a comment\n#[kernel]\nfn reduce(x: *const f32, " + wrong +
                          ") {\n    let _ = x;\n}\n")
                _, errors = self.compile_error(source)
                contract = [e for e in errors if "reduce(x: *const f32, out: *mut f32, n: i32)"
                            in e["message"]]
                self.assertEqual([e["line"] for e in contract], [3], errors)

    def test_a_plain_fn_is_not_a_kernel(self):
        source = GOOD_REDUCE.replace("#[kernel]\nfn", "pub fn")
        _, errors = self.compile_error(source)
        self.assertEqual(errors[0]["line"], 1)
        self.assertIn("kernel", errors[0]["message"])

    def test_a_kernel_without_no_mangle_has_no_entry(self):
        source = GOOD_REDUCE.replace("#[kernel]\nfn", "pub unsafe extern \"ptx-kernel\" fn")
        _, errors = self.compile_error(source)
        self.assertEqual(errors[-1]["line"], 1)
        self.assertIn("#[no_mangle]", errors[-1]["message"])

    def test_a_missing_kernel_is_named(self):
        _, errors = self.compile_error(GOOD_REDUCE.replace("fn reduce", "fn reduce_all"))
        self.assertIn("no kernel named `reduce`", errors[0]["message"])
        self.assertEqual(errors[0]["line"], 0)

    def test_a_call_without_gpu_code_is_a_compile_error(self):
        source = 'unsafe extern "C" { fn helper(v: f32) -> f32; }\n' + GOOD_REDUCE.replace(
            "*x.add(i as usize))", "helper(*x.add(i as usize)))")
        _, errors = self.compile_error(source)
        self.assertIn("`helper`", errors[0]["message"])

    def test_warnings_keep_their_lines_and_do_not_fail_the_build(self):
        answer = self.compile_ok(
            GOOD_REDUCE.replace("    if i < n", "    let spare = 1;\n    if i < n"))
        warnings = [d for d in answer["diagnostics"] if d["severity"] == "warning"]
        self.assertEqual([(w["line"], "spare" in w["message"]) for w in warnings], [(4, True)])

    def test_the_boilerplate_a_learner_may_copy_is_accepted(self):
        source = ("#![no_std]\n#![feature(abi_ptx, asm_experimental_arch)]\n#![allow(unused)]\n"
                  "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn reduce(x: *const f32, "
                  "out: *mut f32, n: i32) {\n    let i = thread::thread_idx_x() as i32;\n"
                  "    if i < n { atomic_add_f32(out, *x.add(i as usize)); }\n}\n")
        answer = self.compile_ok(source)
        self.assertEqual(self.loc_lines_of(answer, r"\s*atom\."), [7])

    # --- the policy -----------------------------------------------------------------------------

    def test_file_and_environment_reads_are_refused_at_their_line(self):
        secret = self.secret
        cases = [
            (f'const P: &str = include_str!("{secret}");', "include_str"),
            ('const P: &str = include_str!("/etc/passwd");', "include_str"),
            (f'const P: &[u8] = include_bytes /* hi */ ! ("{secret}");', "include_bytes"),
            (f'include!("{secret}");', "include"),
            ('const H: &str = env!("HOME");', "env"),
            ('const H: Option<&str> = option_env!("HOME");', "option_env"),
            (f'#[path = "{secret}"]\nmod x;', "path"),
            ('#[path = "/etc/passwd"]\nmod x;', "path"),
            ("mod x;", "would load another file"),
            ("extern crate std;", "`extern crate` is not available"),
            ("m!(include_str);\nmacro_rules! m { ($i:ident) => { const P: &str = $i!(\"" +
             secret + "\"); } }", "include_str"),
            ("macro_rules! m { ($n:ident $t:tt) => { mod $n $t } }\nm!(x ;);",
             "would load another file"),
            (f'#[debugger_visualizer(gdb_script_file = "{secret}")]\nmod m {{}}',
             "debugger_visualizer"),
            (f'const P: &str = r#include_str!("{secret}");', "include_str"),
        ]
        for text, word in cases:
            with self.subTest(source=text):
                answer, errors = self.compile_error("// line 1\n\n" + text + "\n" + GOOD_REDUCE)
                self.assertEqual(errors[0]["line"], 3, answer["log"])
                self.assertIn(word, errors[0]["message"])
                self.assertNotIn("cudojo-secret", answer["_stdout"])
                self.assertNotIn("root:", answer["_stdout"])

    def test_escaped_character_literals_and_shebang_lines_cannot_hide_a_read(self):
        secret = self.secret
        cases = [
            # A literal holding an escaped backslash or quote ends at its own closing quote.
            (f"const C: char = '\\\\'; const S: &str = include_str!(\"{secret}\"); const D: char = 'a';",
             3, "include_str"),
            (f"const C: char = '\\''; const S: &str = include_str!(\"{secret}\"); const D: char = 'a';",
             3, "include_str"),
        ]
        for text, line, word in cases:
            with self.subTest(source=text):
                answer, errors = self.compile_error("// line 1\n\n" + text + "\n" + GOOD_REDUCE)
                self.assertEqual(errors[0]["line"], line, answer["log"])
                self.assertIn(word, errors[0]["message"])
                self.assertNotIn("cudojo-secret", answer["_stdout"])
        # A first line rustc would skip as a shebang, and a direction mark it reads as a space.
        for text in (f"#!\u200e[allow(dead_code)] include!(\"{secret}\");\n",
                     f"#!/usr/bin/env run\ninclude!(\"{secret}\");\n",
                     f"const X: u32 = 1;\u200e\n"):
            with self.subTest(source=text):
                answer, errors = self.compile_error(text + GOOD_REDUCE)
                self.assertNotIn("cudojo-secret", answer["_stdout"])

    def test_comments_and_strings_mentioning_refused_names_are_fine(self):
        source = ('// include_str!("/etc/passwd") is only a comment here\n'
                  '/* env!("HOME") /* nested */ mod x; */\n'
                  'const NOTE: &str = r##"include_bytes!("/etc/passwd") "# mod y;"##;\n'
                  "const C: char = '\"'; const L: &str = \"\\\" include!(\";\n" + GOOD_REDUCE)
        self.compile_ok(source)

    def test_crate_attributes_that_change_the_build_are_refused(self):
        for attribute in ('#![recursion_limit = "100000"]', '#![type_length_limit = "1"]',
                          "#![feature(core_intrinsics)]", "#![no_core]",
                          "#![cfg_attr(all(), feature(rustc_attrs))]"):
            with self.subTest(attribute=attribute):
                _, errors = self.compile_error("\n" + attribute + "\n" + GOOD_REDUCE)
                self.assertEqual(errors[0]["line"], 2)

    def test_unterminated_text_and_unbalanced_braces_are_reported_where_they_start(self):
        cases = [("fn f() { /* never closed\n", 1, 10), ('fn f() { let s = "open;\n}\n', 1, 18),
                 ("fn f() {\n    let x = 1;\n", 1, 8), ("fn f() {}\n}\n", 2, 1)]
        for text, line, column in cases:
            with self.subTest(source=text):
                source = GOOD_REDUCE + text
                offset = GOOD_REDUCE.count("\n")
                _, errors = self.compile_error(source)
                self.assertEqual((errors[0]["line"], errors[0]["column"]), (line + offset, column))


if __name__ == "__main__":
    unittest.main(verbosity=2)
