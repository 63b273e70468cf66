#!/usr/bin/env bash
# check-device-compile.sh — a developer check: compile kernel files, with the device prelude the library prepends, for NVIDIA (NVRTC) and AMD (hipRTC) targets on a machine with no GPU.
#
#   tools/check-device-compile.sh BUILD_DIR FILE.hip...
#
# NVRTC: the text the GPU backend compiles (amp_prelude.hip, amp_cpu_device.hpp,
# amp_device_lib.hip, then FILE under #line markers) for sm_90 with -std=c++17,
# through libnvrtc (NVRTC_LIB, default /usr/local/cuda/lib64/libnvrtc.so).
# hipRTC: BUILD_DIR/hipamp-compile for gfx90a and gfx1030 (GFX_TARGETS).
# A compiler that is not installed is reported and skipped. Exit status 1 if
# any compile failed. Writes only under a temporary directory.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 BUILD_DIR FILE.hip..." >&2
    exit 2
fi
build=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
nvrtc=${NVRTC_LIB:-/usr/local/cuda/lib64/libnvrtc.so}
targets=${GFX_TARGETS:-gfx90a gfx1030}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# A minimal NVRTC driver: compile one file, print the log, exit non-zero on
# failure.
cat > "$tmp/nvrtc_check.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    int (*create)(void **, const char *, const char *, int, const char *const *, const char *const *);
    int (*compile)(void *, int, const char *const *);
    int (*logsize)(void *, size_t *);
    int (*getlog)(void *, char *);
    *(void **)&create = dlsym(h, "nvrtcCreateProgram");
    *(void **)&compile = dlsym(h, "nvrtcCompileProgram");
    *(void **)&logsize = dlsym(h, "nvrtcGetProgramLogSize");
    *(void **)&getlog = dlsym(h, "nvrtcGetProgramLog");
    if (!create || !compile || !logsize || !getlog) { fprintf(stderr, "not an NVRTC library\n"); return 2; }
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 2; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *src = malloc((size_t)n + 1);
    if (!src || fread(src, 1, (size_t)n, f) != (size_t)n) return 2;
    src[n] = 0;
    fclose(f);
    void *prog = NULL;
    if (create(&prog, src, "kernel.hip", 0, NULL, NULL) != 0) return 2;
    const char *opts[] = {"--gpu-architecture=sm_90", "-std=c++17"};
    int rc = compile(prog, 2, opts);
    size_t ls = 0;
    logsize(prog, &ls);
    char *log = malloc(ls + 1);
    if (log && getlog(prog, log) == 0) { log[ls] = 0; fputs(log, stdout); }
    return rc != 0;
}
EOF

have_nvrtc=0
if [ -r "$nvrtc" ] && cc -o "$tmp/nvrtc_check" "$tmp/nvrtc_check.c" -ldl 2>"$tmp/cc.log"; then
    have_nvrtc=1
else
    echo "NVRTC: skipped ($nvrtc not found, or no C compiler)"
fi
if [ ! -x "$build/hipamp-compile" ]; then
    echo "hipRTC: skipped ($build/hipamp-compile not built)"
fi

for file in "$@"; do
    if [ $have_nvrtc = 1 ]; then
        unit="$tmp/unit.cu"
        : > "$unit"
        for part in "$root/hip_kernels/amp_prelude.hip" "$root/hip_kernels/amp_cpu_device.hpp" \
                    "$root/hip_kernels/amp_device_lib.hip" "$file"; do
            printf '#line 1 "%s"\n' "$(basename "$part")" >> "$unit"
            cat "$part" >> "$unit"
            printf '\n' >> "$unit"
        done
        if "$tmp/nvrtc_check" "$nvrtc" "$unit" > "$tmp/nvrtc.log" 2>&1; then
            echo "NVRTC sm_90: $file: ok"
        else
            echo "NVRTC sm_90: $file: FAILED"
            status=1
        fi
        grep -v '^$' "$tmp/nvrtc.log" | sed 's/^/    /'
    fi
    if [ -x "$build/hipamp-compile" ]; then
        for t in $targets; do
            if "$build/hipamp-compile" --target "$t" -o "$tmp/out.co" "$file" > "$tmp/hip.log" 2>&1; then
                echo "hipRTC $t: $file: ok ($(head -1 "$tmp/hip.log" | sed 's/^[^:]*: //'))"
            else
                echo "hipRTC $t: $file: FAILED"
                sed 's/^/    /' "$tmp/hip.log"
                status=1
            fi
        done
    fi
done
exit $status
