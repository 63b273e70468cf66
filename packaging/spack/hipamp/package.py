# package.py — Spack recipe for hipamp: library, tools, installed Makefile example; +tests, +mpi.
#
# Variants: +tests builds the Criterion suite (spack install --test=root runs
# it); +mpi adds MPI and checks the installed MPI example (spack test run).
#
# Put this directory into a Spack repository of your own (spack repo create
# ~/spack-hipamp; cp -r packaging/spack/hipamp ~/spack-hipamp/packages/;
# spack repo add ~/spack-hipamp), set `homepage` and `git` below to where
# your hipamp repository lives (the .invalid addresses are placeholders), then:
# spack install hipamp@main [+tests] [+mpi].

import os
import re

from spack.package import *


class Hipamp(CMakePackage):
    """The C++ AMP programming model (extent, index, tiled parallel_for_each,
    tile_static, tile_barrier, array, array_view, accelerator) for C11
    programs. Kernels are HIP C++ compiled at run time: with hipRTC on AMD
    GPUs and APUs, with NVRTC on NVIDIA GPUs, and with the system C++
    compiler on the CPU. No GPU SDK is needed to build it: the vendor
    libraries are loaded at run time, so one install serves machines with
    an AMD GPU, an NVIDIA GPU or none."""

    homepage = "https://hipamp.invalid/"
    git = "https://hipamp.invalid/hipamp.git"

    version("main", branch="main")

    variant(
        "tests",
        default=False,
        description="Build the Criterion test suite (spack install --test=root runs it)",
    )
    variant(
        "mpi",
        default=False,
        description="Depend on MPI and check the installed MPI example (one rank per GPU)",
    )
    variant(
        "prebuilt_targets",
        default="cpu,sm_80,sm_90,sm_100,gfx90a,gfx942,gfx1100",
        values=("none", "cpu", "sm_70", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "gfx908",
                "gfx90a", "gfx942", "gfx1030", "gfx1100"),
        multi=True,
        description="Targets the built-in algorithms are compiled for at build time (HIPAMP_PREBUILT_TARGETS; "
        "a target whose compiler the build does not find is skipped; cpu: the build node's CPU)",
    )

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("pkgconfig", type=("build", "test"))
    depends_on("criterion", when="+tests")
    depends_on("mpi", when="+mpi")

    def cmake_args(self):
        # REQUIRED: with +tests a missing Criterion is an error, not a skip.
        tests = "REQUIRED" if self.spec.satisfies("+tests") else "OFF"
        targets = [t for t in self.spec.variants["prebuilt_targets"].value if t != "none"]
        return [
            self.define("HIPAMP_BUILD_TESTS", tests),
            self.define("HIPAMP_BUILD_EXAMPLES", False),
            self.define("HIPAMP_PREBUILT_TARGETS", ";".join(targets)),
        ]

    def setup_run_environment(self, env):
        # The CPU accelerator compiles kernels with a C++17 compiler at run
        # time: the one this package was built with, unless the user sets
        # AMP_CXX after loading it.
        env.set("AMP_CXX", self.compiler.cxx)

    def _example(self):
        """Copy the installed Makefile example into the test's directory."""
        src = join_path(self.prefix.share, "hipamp", "examples", "makefile")
        install_tree(src, "makefile-example")
        return "makefile-example"

    def _make_env(self):
        pc = find(self.prefix, "hipamp.pc")
        if not pc:
            raise InstallError("hipamp.pc is not installed")
        return {"PKG_CONFIG_PATH": os.path.dirname(pc[0])}

    def test_hipamp_info(self):
        """the installed hipamp-info runs and lists the CPU accelerator"""
        info = which(self.prefix.bin.join("hipamp-info"))
        out = info(output=str.split, error=str.split)
        assert re.search(r"^\[\d+\] cpu", out, re.MULTILINE), out

    def test_makefile_example(self):
        """the installed Makefile example builds through pkg-config and runs"""
        make = which("make")
        with working_dir(self._example()):
            make(extra_env=self._make_env())
            app = which("./app")
            out = app(output=str.split, error=str.split)
            assert "matches the host" in out, out

    def test_mpi_example(self):
        """the MPI Makefile example runs on two ranks"""
        if not self.spec.satisfies("+mpi"):
            raise SkipTest("built without +mpi")
        make = which("make")
        mpi = self.spec["mpi"]
        mpiexec = which(mpi.prefix.bin.join("mpiexec"), mpi.prefix.bin.join("mpirun"))
        with working_dir(self._example()):
            make("mpi", "MPICC=" + mpi.mpicc, extra_env=self._make_env())
            out = mpiexec("-n", "2", "./app_mpi", output=str.split, error=str.split)
            assert "2 ranks" in out and "match the host" in out, out
