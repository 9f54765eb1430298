#!/usr/bin/env python3
"""Mutation testing of `opgrad check`: plant each bug of mutants.py in a scratch copy of the
tree, rebuild the `opgrad` tool incrementally, run the default `opgrad check`, and report
whether the checker kills the bug with the expected diagnosis. See tests/mutation/README.md.

    run.py [--fast] [--list] [--keep] [--jobs N] [--opgrad-args "..."] [ID...]

Standard library only. Never touches the working tree it is run from: every file is copied to a
scratch directory under $TMPDIR (default /tmp) first.
"""
import argparse
import fnmatch
import importlib.util
import json
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # loading mutants.py leaves no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

ISA_ORDER = ["scalar", "avx2", "avx512", "avx512bf16", "avx512fp16", "amx"]
KILLED, WRONG, SURVIVED, CRASHED = "KILLED", "KILLED-WRONG-DIAGNOSIS", "SURVIVED", "CRASHED"
NA, STALE, BUILD_ERROR = "NOT-APPLICABLE", "STALE", "BUILD-ERROR"
KILLS = (KILLED, WRONG, CRASHED)         # counted as killed in the kill rate
HARNESS_FAILURES = (STALE, BUILD_ERROR)  # the mutant list or the harness needs fixing
REQUIRED_KEYS = ("id", "cls", "file", "find", "replace", "expect", "isa", "fast", "why")


def load_mutants(path=None):
    path = path or os.path.join(HERE, "mutants.py")
    spec = importlib.util.spec_from_file_location("opgrad_mutants", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mutants = mod.MUTANTS
    seen = set()
    for m in mutants:
        missing = [k for k in REQUIRED_KEYS if k not in m]
        if missing:
            sys.exit("mutants.py: %s lacks %s" % (m.get("id", "?"), ", ".join(missing)))
        if m["id"] in seen:
            sys.exit("mutants.py: duplicate id %s" % m["id"])
        if m["isa"] not in ISA_ORDER:
            sys.exit("mutants.py: %s has isa %r, not one of %s" % (m["id"], m["isa"], ISA_ORDER))
        if m["find"] == m["replace"]:
            sys.exit("mutants.py: %s replaces its text by itself" % m["id"])
        re.compile(m["expect"])
        seen.add(m["id"])
    return mutants


def count_in(m, rev=None):
    """Occurrences of the mutant's `find` in its file (of the working tree, or of a revision)."""
    try:
        if rev:
            data = subprocess.run(["git", "show", "%s:%s" % (rev, m["file"])], cwd=REPO,
                                  check=True, capture_output=True).stdout
        else:
            with open(os.path.join(REPO, m["file"]), "rb") as f:
                data = f.read()
        return data.count(m["find"].encode())
    except (OSError, subprocess.CalledProcessError):
        return -1


_print_lock = threading.Lock()


def log(msg):
    with _print_lock:
        print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# The scratch tree


def source_files():
    """Tracked files plus untracked, non-ignored ones (git); without git, every file under the
    directories a build needs."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=REPO,
                             check=True, capture_output=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        return [f for f in files if os.path.isfile(os.path.join(REPO, f))]  # (deleted, unstaged)
    except (OSError, subprocess.CalledProcessError):
        files = ["CMakeLists.txt"]
        for top in ("cmake", "include", "src", "tools", "tests", "examples", "bench"):
            for dirpath, _, names in os.walk(os.path.join(REPO, top)):
                files += [os.path.relpath(os.path.join(dirpath, n), REPO) for n in names]
        return [f for f in files if os.path.isfile(os.path.join(REPO, f))]


def cmake_options(src):
    """-D flags for the options the top-level CMakeLists.txt declares: tests, examples, benchmarks
    and python bindings off (not needed for the tool), -Werror off (a planted bug may leave an
    unused variable behind; that is not what is being tested)."""
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        text = f.read()
    declared = set(re.findall(r"option\(\s*(\w+)", text))
    flags = ["-DCMAKE_BUILD_TYPE=Release"]
    for name in sorted(declared):
        if re.fullmatch(r"OPGRAD_(BUILD_(TESTS|EXAMPLES|BENCH|PYTHON|DOCS)|WERROR|FUZZ)", name):
            flags.append("-D%s=OFF" % name)
    return flags


def tool_target(src):
    """The executable target that produces bin/opgrad (the library target is `opgrad`)."""
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        text = f.read()
    m = re.search(r"add_executable\(\s*(\w+)\s+tools/opgrad/", text)
    return m.group(1) if m else "opgrad"


class Worker:
    """One scratch copy of the tree with its own build directory."""

    def __init__(self, root, files, ninja_jobs, rev=None):
        self.root = root
        self.src = os.path.join(root, "src")
        self.build = os.path.join(root, "build")
        self.ninja_jobs = ninja_jobs
        os.makedirs(self.src)
        if rev:  # a committed revision instead of the working tree
            tar = os.path.join(root, "src.tar")
            subprocess.run(["git", "archive", "--format=tar", "-o", tar, rev], cwd=REPO, check=True)
            with tarfile.open(tar) as t:
                if hasattr(tarfile, "data_filter"):
                    t.extractall(self.src, filter="data")
                else:
                    t.extractall(self.src)
            os.remove(tar)
        for rel in files:
            dst = os.path.join(self.src, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(REPO, rel), dst)
        self.target = tool_target(self.src)
        self.tool = os.path.join(self.build, "bin", "opgrad")
        self.probe_obj = None

    def configure(self):
        """Returns (ok, output tail)."""
        cmd = ["cmake", "-G", "Ninja", "-S", self.src, "-B", self.build] + cmake_options(self.src)
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode == 0, "cmake failed:\n" + r.stdout[-3000:] + r.stderr[-3000:]

    def make(self):
        """Incremental build of the tool; returns (ok, output tail)."""
        cmd = ["ninja", "-C", self.build, self.target]
        if self.ninja_jobs:
            cmd[1:1] = ["-j", str(self.ninja_jobs)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        out = r.stdout + r.stderr
        return r.returncode == 0, "\n".join(out.splitlines()[-25:])

    def check(self, extra, timeout):
        cmd = [self.tool, "check"] + extra
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               errors="replace")
            return r.returncode, r.stdout + r.stderr, time.monotonic() - t0
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"") + (e.stderr or b"")
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            return "timeout", out, time.monotonic() - t0

    def cpu_isa(self):
        r = subprocess.run([self.tool, "info"], capture_output=True, text=True)
        m = re.search(r"^cpu isa:\s*(\w+)", r.stdout, re.M)
        return m.group(1) if m else "scalar"

    # -- the differential probe (probe.c): does the mutant change any result at all?
    def probe(self, timeout, lib=None):
        """Links probe.c against `lib` (default: this tree's libopgrad.a) and runs it; returns
        (its output lines, None) or (None, why not)."""
        lib = lib or os.path.join(self.build, "libopgrad.a")
        if not os.path.exists(lib):
            return None, "no libopgrad.a in the build"
        cc = os.environ.get("CC", "cc")
        if self.probe_obj is None:
            self.probe_obj = os.path.join(self.root, "probe.o")
            r = subprocess.run([cc, "-O1", "-std=c11", "-c", os.path.join(HERE, "probe.c"), "-I",
                                os.path.join(self.src, "include"), "-o", self.probe_obj],
                               capture_output=True, text=True)
            if r.returncode:
                self.probe_obj = None
                return None, "probe.c does not compile: " + r.stderr[-2000:]
        exe = os.path.join(self.root, "probe")
        if os.path.exists(exe):
            os.remove(exe)
        r = subprocess.run([cc, self.probe_obj, lib, "-lm", "-lpthread", "-ldl", "-o", exe],
                           capture_output=True, text=True)
        if r.returncode:
            return None, "probe does not link: " + r.stderr[-2000:]
        try:
            r = subprocess.run([exe], capture_output=True, text=True, timeout=timeout,
                               errors="replace")
        except subprocess.TimeoutExpired:
            return None, "probe timed out"
        lines = r.stdout.splitlines()
        if r.returncode:
            lines.append("probe exit status %d" % r.returncode)
        return lines, None


def write_bytes(path, data, not_before_ns):
    """Writes data and gives the file an mtime after not_before_ns (so that ninja sees it)."""
    with open(path, "wb") as f:
        f.write(data)
    t = max(time.time_ns(), not_before_ns + 1_000_000)
    os.utime(path, ns=(t, t))
    return t


# ---------------------------------------------------------------------------------------------
# One mutant


def failure_lines(output):
    return [l.strip() for l in output.splitlines() if re.match(r"\s+(FAIL|MISTRUSTED) ", l)]


def probe_diff(base, lines):
    """Labels of the probe lines that differ from the baseline's (or exist on one side only)."""
    def table(ls):
        t = {}
        for l in ls:
            key, _, val = l.rpartition(" ")
            t[key or l] = val
        return t
    b, m = table(base), table(lines)
    return sorted(k for k in set(b) | set(m) if b.get(k) != m.get(k))


def probe_baseline(w, args, ctx):
    """The probe's results on the unmutated library (saved after the baseline build), computed
    once, on first use: run twice, and results that differ between the runs are dropped."""
    with ctx["probe_lock"]:
        if ctx["probe_base"] is None and ctx["probe_error"] is None:
            base, err = w.probe(args.timeout, ctx["base_lib"])
            if not err:
                again, err = w.probe(args.timeout, ctx["base_lib"])
            if err:
                ctx["probe_error"] = "probe unavailable: " + err
            else:
                unstable = set(probe_diff(base, again))
                log("(probe baseline: %d results on the unmutated library%s)" %
                    (len(base), ", %d unstable ones ignored" % len(unstable) if unstable else ""))
                ctx["probe_unstable"] = unstable
                ctx["probe_base"] = base
        return ctx["probe_base"], ctx["probe_error"]


def run_mutant(w, m, args, ctx):
    res = {"id": m["id"], "cls": m["cls"], "file": m["file"], "isa": m["isa"],
           "fast": m["fast"], "seconds": 0.0, "detail": []}
    t0 = time.monotonic()
    if ISA_ORDER.index(m["isa"]) > ISA_ORDER.index(ctx["cpu_isa"]):
        res["outcome"] = NA
        res["detail"] = ["the CPU's isa is %s" % ctx["cpu_isa"]]
        return res
    path = os.path.join(w.src, m["file"])
    try:
        with open(path, "rb") as f:
            orig = f.read()
    except OSError:
        res["outcome"] = STALE
        res["detail"] = ["%s does not exist" % m["file"]]
        return res
    find, repl = m["find"].encode(), m["replace"].encode()
    n = orig.count(find)
    if n != 1:
        res["outcome"] = STALE
        res["detail"] = ["`find` occurs %d times in %s (must be exactly once)" % (n, m["file"])]
        return res
    orig_mtime = os.stat(path).st_mtime_ns
    t_mut = write_bytes(path, orig.replace(find, repl), orig_mtime)
    try:
        ok, out = w.make()
        if not ok:
            res["outcome"] = BUILD_ERROR
            res["detail"] = out.splitlines()[-15:]
            return res
        # the fast (CI) subset: a mutant naming its entries ("ops") is checked on those only
        extra = args.extra + (["--op", m["ops"]] if args.fast and m.get("ops") else [])
        rc, output, secs = w.check(extra, args.timeout)
        res["check_seconds"] = round(secs, 2)
        fails = failure_lines(output)
        if rc == 0:
            res["outcome"] = SURVIVED
        elif rc == 1:
            if re.search(m["expect"], output, re.M):
                res["outcome"] = KILLED
                hit = [l for l in fails if re.search(m["expect"], l)]
                res["detail"] = (hit or fails)[:1]
            else:
                res["outcome"] = WRONG
                res["detail"] = ["expected /%s/; the checker's failures:" % m["expect"]] + \
                    fails[:8] + (["... %d more" % (len(fails) - 8)] if len(fails) > 8 else [])
        else:
            res["outcome"] = CRASHED
            why = "timed out after %ss" % args.timeout if rc == "timeout" else \
                "killed by signal %d" % -rc if rc < 0 else "exit status %d" % rc
            res["detail"] = [why] + output.strip().splitlines()[-6:]
        res["failures"] = len([l for l in fails if l.startswith("FAIL")])
        if ctx["probe"] and (args.probe == "all" or res["outcome"] == SURVIVED):
            base, err = probe_baseline(w, args, ctx)
            lines = None
            if not err:
                lines, err = w.probe(args.timeout)
            if err:
                res["probe"] = err
            else:
                diff = [k for k in probe_diff(base, lines) if k not in ctx["probe_unstable"]]
                res["probe_diffs"] = len(diff)
                res["probe"] = ("changes %d probe results, e.g. %s" % (len(diff), diff[0])
                                if diff else "changes no probe result (an equivalent mutant?)")
    finally:
        write_bytes(path, orig, t_mut)  # restore, newer than the mutant for ninja
        res["seconds"] = round(time.monotonic() - t0, 1)
    return res


def format_result(r):
    line = "%-30s %-19s %-23s %6.1fs" % (r["id"], r["cls"], r["outcome"], r["seconds"])
    more = ["    " + d for d in r["detail"]]
    if "probe" in r:
        more.append("    probe: " + r["probe"])
    return "\n".join([line] + more)


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", metavar="ID",
                    help="mutant ids or shell patterns (default: all)")
    ap.add_argument("--fast", action="store_true", help="only the mutants marked fast (CI)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--jobs", type=int, default=1,
                    help="mutants tested in parallel, each in its own scratch tree (default 1)")
    ap.add_argument("--opgrad-args", default="", help="extra arguments for `opgrad check`")
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds per `opgrad check` (default: max(120, 20 x the baseline))")
    ap.add_argument("--probe", choices=["survivors", "all", "none"], default="survivors",
                    help="run the differential probe (probe.c) on survivors (default), on every "
                         "mutant, or never: it shows whether a mutant changes any result at all")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--mutants", metavar="FILE",
                    help="another mutant list (a python file defining MUTANTS; default mutants.py)")
    ap.add_argument("--rev", metavar="REV",
                    help="test the tree of a git revision (e.g. HEAD~1) instead of the working "
                         "tree; the mutants still come from this mutants.py")
    ap.add_argument("--scratch", metavar="DIR",
                    help="scratch parent directory (default $TMPDIR or /tmp)")
    args = ap.parse_args()
    args.extra = shlex.split(args.opgrad_args)

    mutants = load_mutants(args.mutants)
    sel = mutants
    if args.ids:
        sel = [m for m in mutants if any(fnmatch.fnmatchcase(m["id"], p) for p in args.ids)]
        unknown = [p for p in args.ids
                   if not any(fnmatch.fnmatchcase(m["id"], p) for m in mutants)]
        if unknown:
            sys.exit("unknown mutant id(s): %s (see --list)" % " ".join(unknown))
    if args.fast:
        sel = [m for m in sel if m["fast"]]

    if args.list:
        print("%-30s %-19s %-10s %-5s %-6s %s" % ("id", "class", "isa", "fast", "find", "file"))
        stale = 0
        for m in sel:
            n = count_in(m, args.rev)
            state = "ok" if n == 1 else "STALE"
            stale += n != 1
            print("%-30s %-19s %-10s %-5s %-6s %s" % (m["id"], m["cls"], m["isa"],
                                                      "yes" if m["fast"] else "", state, m["file"]))
            print("    " + m["why"])
        print("\n%d mutants (%d fast)%s" % (len(sel), sum(m["fast"] for m in sel),
                                            ", %d STALE" % stale if stale else ""))
        return 1 if stale else 0
    if not sel:
        sys.exit("no mutants selected")

    t_start = time.monotonic()
    parent = args.scratch or os.environ.get("TMPDIR") or "/tmp"
    scratch = tempfile.mkdtemp(prefix="opgrad-mutation-", dir=parent)
    jobs = max(1, min(args.jobs, len(sel)))
    ninja_jobs = max(1, (os.cpu_count() or 2) // jobs) if jobs > 1 else 0
    print("opgrad mutation run: %d mutants, %s, scratch %s, %d job(s)" %
          (len(sel), "revision " + args.rev if args.rev else "the working tree", scratch, jobs))
    for var in ("OPGRAD_ISA", "OPGRAD_NUM_THREADS", "OPGRAD_FUSED16"):
        if var in os.environ:
            print("note: %s=%s is set and applies to every `opgrad check`" % (var, os.environ[var]))
    results = {}
    exit_code = 0
    try:
        files = [] if args.rev else source_files()
        workers = [Worker(os.path.join(scratch, "w%d" % i), files, ninja_jobs, args.rev)
                   for i in range(jobs)]
        # configure and build every worker (in parallel), then the baseline on worker 0
        def prepare(w):
            w.ok, w.out = w.configure()
            if w.ok:
                w.ok, w.out = w.make()
        threads = [threading.Thread(target=prepare, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for w in workers:
            if not w.ok:
                print("the unmutated tree does not build:\n" + w.out)
                return 2
        t_built = time.monotonic()
        w0 = workers[0]
        rc, output, base_secs = w0.check(args.extra, 600)
        if rc != 0:
            print("baseline: `opgrad check %s` exits %s on the unmutated tree; stopping" %
                  (" ".join(args.extra), rc))
            print("\n".join(failure_lines(output)[:20]) or output[-3000:])
            return 2
        if not args.timeout:
            args.timeout = max(120.0, 20 * base_secs)
        cpu = w0.cpu_isa()
        print("baseline: built in %.0f s; `opgrad check%s` passes in %.1f s; cpu isa %s" %
              (t_built - t_start, (" " + " ".join(args.extra)) if args.extra else "",
               base_secs, cpu))
        ctx = {"cpu_isa": cpu, "probe": args.probe != "none", "probe_lock": threading.Lock(),
               "probe_base": None, "probe_error": None, "probe_unstable": set(),
               "base_lib": os.path.join(scratch, "libopgrad.base.a")}
        if ctx["probe"]:  # the unmutated library, for the probe's baseline (run when first needed)
            shutil.copy2(os.path.join(w0.build, "libopgrad.a"), ctx["base_lib"])
        print()
        print("%-30s %-19s %-23s %7s" % ("mutant", "class", "outcome", "time"))

        # mutants of one file run back to back: restoring a shared header and planting the next
        # mutant in it is then one rebuild of its dependents instead of two
        todo = queue.Queue()
        for m in sorted(sel, key=lambda m: m["file"]):
            todo.put(m)

        def work(w):
            while True:
                try:
                    m = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    r = run_mutant(w, m, args, ctx)
                except Exception as e:  # a harness bug: report it against the mutant
                    r = {"id": m["id"], "cls": m["cls"], "file": m["file"], "isa": m["isa"],
                         "fast": m["fast"], "seconds": 0.0, "outcome": BUILD_ERROR,
                         "detail": ["harness error: %r" % e]}
                results[m["id"]] = r
                log(format_result(r))
        threads = [threading.Thread(target=work, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        # every file is restored: the tree must build and pass again
        restore_ok = True
        for w in workers:
            ok, out = w.make()
            rc, output, _ = w.check(args.extra, args.timeout) if ok else (None, out, 0)
            if rc != 0:
                restore_ok = False
                print("\nharness error: after restoring every file, %s does not pass again:\n%s"
                      % (w.root, "\n".join(failure_lines(output)[:10]) or output[-2000:]))

        # summary
        ordered = [results[m["id"]] for m in sel if m["id"] in results]
        print("\nsummary (kill rate = killed / applicable; KILLED-WRONG-DIAGNOSIS and CRASHED "
              "count as killed)")
        classes = []
        for r in ordered:
            if r["cls"] not in classes:
                classes.append(r["cls"])
        print("  %-19s %10s %6s %8s %6s  %s" % ("class", "applicable", "killed", "survived",
                                                 "rate", "other"))

        def row(name, rs):
            app = [r for r in rs if r["outcome"] not in (NA,) + HARNESS_FAILURES]
            k = sum(r["outcome"] in KILLS for r in app)
            s = sum(r["outcome"] == SURVIVED for r in app)
            other = {}
            for r in rs:
                if r["outcome"] not in (KILLED, SURVIVED):
                    other[r["outcome"]] = other.get(r["outcome"], 0) + 1
            rate = "%5.0f%%" % (100.0 * k / len(app)) if app else "    -"
            print("  %-19s %10d %6d %8d %6s  %s" % (name, len(app), k, s, rate,
                                                   ", ".join("%d %s" % (v, o)
                                                             for o, v in other.items())))
            return len(app), k
        for c in classes:
            row(c, [r for r in ordered if r["cls"] == c])
        app, k = row("all", ordered)
        survivors = [r["id"] for r in ordered if r["outcome"] == SURVIVED]
        if survivors:
            print("\nsurvivors: " + " ".join(survivors))
        bad = [r for r in ordered if r["outcome"] not in (KILLED, NA)]
        harness = [r for r in ordered if r["outcome"] in HARNESS_FAILURES]
        if harness:
            print("harness failures (fix mutants.py or the harness): " +
                  " ".join("%s (%s)" % (r["id"], r["outcome"]) for r in harness))
        total = time.monotonic() - t_start
        print("\n%d mutants, %d applicable, %d killed: kill rate %s; %.0f s in all" %
              (len(ordered), app, k, "%.0f%%" % (100.0 * k / app) if app else "-", total))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"cpu_isa": cpu, "baseline_seconds": round(base_secs, 2),
                           "seconds": round(total, 1), "applicable": app, "killed": k,
                           "results": ordered}, f, indent=1)
        exit_code = 0 if not bad and restore_ok else 1
    finally:
        if args.keep:
            print("scratch kept: %s (w*/src the restored tree, w*/build its build)" % scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
