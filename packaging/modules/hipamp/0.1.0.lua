-- 0.1.0.lua — Lmod module file for hipamp 0.1.0 installed under a prefix (edit `root`; see packaging/modules/README.md).
help([[
hipamp 0.1.0: the C++ AMP programming model for C11 (AMD GPUs/APUs through HIP,
NVIDIA GPUs through CUDA, and the CPU).

  hipamp-info                 lists the accelerators this node has
  pkg-config --libs hipamp    link flags (with -Wl,-rpath: no LD_LIBRARY_PATH needed)
  find_package(hipamp)        for CMake projects
  $HIPAMP_ROOT/share/hipamp/examples/makefile   a Makefile example
]])
whatis("Name: hipamp")
whatis("Version: 0.1.0")
whatis("Description: C++ AMP for C on AMD and NVIDIA GPUs and the CPU")

local root = "/opt/hipamp/0.1.0"

setenv("HIPAMP_ROOT", root)
prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("PKG_CONFIG_PATH", pathJoin(root, "lib", "pkgconfig"))
prepend_path("CMAKE_PREFIX_PATH", root)
-- For `cc app.c -lhipamp` without pkg-config: the compiler finds the header
-- and the library; add -Wl,-rpath,$HIPAMP_ROOT/lib to run without
-- LD_LIBRARY_PATH. The installed tools carry their own run path.
prepend_path("CPATH", pathJoin(root, "include"))
prepend_path("LIBRARY_PATH", pathJoin(root, "lib"))

-- APUs (MI300A) run array_views zero-copy only with XNACK on; uncomment
-- on such nodes (hipamp-info then says "zero-copy").
-- setenv("HSA_XNACK", "1")
