#!/usr/bin/env python3
"""check-spack-recipe.py — checks packaging/spack/hipamp/package.py without Spack (not installable here): it parses as Python 3, defines class Hipamp(CMakePackage) with a version, the +tests and +mpi variants, cmake_args and its stand-alone tests, and every name it calls from spack.package is one Spack provides. Exits non-zero with the reason on the first problem."""
import ast
import builtins
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "packaging/spack/hipamp/package.py"
# Directives and helpers the recipe may use from `from spack.package import *`.
SPACK_NAMES = {"version", "variant", "depends_on", "conflicts", "patch", "resource", "provides", "maintainers",
               "license", "join_path", "install_tree", "find", "which", "InstallError", "make", "CMakePackage",
               "run_after", "on_package_attributes", "working_dir", "mkdirp", "filter_file", "copy", "install",
               "SkipTest", "Executable", "ProcessError"}
BUILTINS = set(dir(builtins))


def fail(msg):
    print(f"check-spack-recipe: {path}: {msg}")
    sys.exit(1)


try:
    src = open(path, encoding="utf-8").read()
    tree = ast.parse(src, filename=path)
except (OSError, SyntaxError) as e:
    fail(f"does not parse: {e}")

imports = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
if not any(n.module == "spack.package" and any(a.name == "*" for a in n.names) for n in imports):
    fail("lacks `from spack.package import *`")
classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Hipamp"]
if not classes:
    fail("defines no class Hipamp")
cls = classes[0]
if not any(isinstance(b, ast.Name) and b.id == "CMakePackage" for b in cls.bases):
    fail("class Hipamp is not a CMakePackage")

calls = [n for n in ast.walk(cls) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
called = {c.func.id for c in calls}
if "version" not in called:
    fail("declares no version()")
variants = {c.args[0].value for c in calls if c.func.id == "variant" and c.args and isinstance(c.args[0], ast.Constant)}
for v in ("tests", "mpi"):
    if v not in variants:
        fail(f"has no variant '{v}' (has {sorted(variants)})")
for c in calls:
    if c.func.id == "depends_on" and c.args and isinstance(c.args[0], ast.Constant):
        when = [k for k in c.keywords if k.arg == "when"]
        for k in when:
            if not (isinstance(k.value, ast.Constant) and str(k.value.value).startswith(("+", "~", "@", "%"))):
                fail(f"depends_on({c.args[0].value!r}) has a when= that is not a spec")

methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
for m in ("cmake_args",):
    if m not in methods:
        fail(f"class Hipamp has no {m}()")
tests = sorted(m for m in methods if m.startswith("test_"))
if not tests:
    fail("class Hipamp has no stand-alone test_* methods")

# Names the recipe uses that it neither defines, imports nor gets from Spack.
defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
defined |= {a.asname or a.name for n in imports + [n for n in tree.body if isinstance(n, ast.Import)] for a in n.names}
assigned = {t.id for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.For, ast.comprehension))
            for t in ast.walk(n.target if hasattr(n, "target") else ast.Tuple(elts=n.targets, ctx=ast.Store()))
            if isinstance(t, ast.Name)}
args = {a.arg for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda)) for a in n.args.args}
known = defined | assigned | args | SPACK_NAMES | BUILTINS | {"self", "os", "re"}
unknown = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - known)
if unknown:
    fail(f"uses names that are neither defined nor Spack's: {', '.join(unknown)}")
print(f"check-spack-recipe: {path}: parses; class Hipamp(CMakePackage), variants {sorted(variants)}, "
      f"stand-alone tests {', '.join(tests)}: passed")
