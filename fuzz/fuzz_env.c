/* fuzz_env.c — libFuzzer harness for the readers of environment values and option strings: lib/base/env.c (amp__env_flag, _word, _uint, _size, _flag_or_auto), lib/base/options.c (amp__split_options, amp__options_refuse_inputs), lib/base/trusted_file.c (amp__trusted_users: AMP_TRUSTED_USERS), lib/trace/trace_file.c (amp__tfile_configure: AMP_TRACE), and examples/stream/stream.c's command line (its parse(), included here with main renamed). The first byte picks the reader and its bounds; the rest, to its first NUL, is the value. Checks: a value read is within its bounds; the words of an option string are non-empty, have no blank, and are at most (len+1)/2. stderr's bad-value lines are expected (run with -close_fd_mask=2). */
#include "base/core.h"
#include "base/trusted_file.h"
#include "base/trusted_path.h"
#include "trace/trace_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char stream_kernels[] = "";
#define main stream_main
#include "../examples/stream/stream.c"
#undef main

static const char *const words[] = {"auto", "tiled", "alg", "none", "x"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char *v = malloc(size);
    if (!v) return 0;
    memcpy(v, data + 1, size - 1);
    v[size - 1] = 0;
    const unsigned sel = data[0];
    setenv("AMP_FZ", v, 1);
    switch (sel % 8) {
    case 0: (void)amp__env_flag("AMP_FZ", sel & 8); break;
    case 1: {
        int w = amp__env_word("AMP_FZ", words, 5, (sel >> 3) % 5);
        if (w < 0 || w >= 5) abort();
        if (amp__env_flag_or_auto("AMP_FZ") < -1 || amp__env_flag_or_auto("AMP_FZ") > 1) abort();
        break;
    }
    case 2: {
        unsigned lo = (sel & 8) ? 1 : 0, hi = (sel & 16) ? 86400u : 0xffffffffu;
        unsigned x = amp__env_uint("AMP_FZ", 7, lo, hi);
        if (x != 7 && (x < lo || x > hi)) abort();
        break;
    }
    case 3: {
        unsigned long long lo = (sel & 8) ? 4096 : 1, hi = (sel & 16) ? (1ULL << 40) : ~0ULL;
        unsigned long long x = amp__env_size("AMP_FZ", 8192, lo, hi);
        if (x != 8192 && (x < lo || x > hi)) abort();
        break;
    }
    case 4: {
        char **argv = NULL, *storage = NULL;
        size_t argc = 0, nfixed = sel >> 6;
        if (amp__split_options(v, nfixed, 1, &argv, &argc, &storage) == AMP_OK) {
            size_t len = strlen(v);
            if (argc < nfixed || argc - nfixed > (len + 1) / 2 || argv[argc]) abort();
            for (size_t i = 0; i < nfixed; ++i) argv[i] = (char *)"-O2";
            for (size_t i = nfixed; i < argc; ++i) {
                if (!argv[i][0]) abort();
                for (const char *c = argv[i]; *c; ++c)
                    if (isspace((unsigned char)*c)) abort();
            }
            static const char *const takes[] = {"-I", "-D", "-o", NULL};
            (void)amp__options_refuse_inputs("fz", argv, argc, takes);
            free(argv);
            free(storage);
        }
        break;
    }
    case 5: {
        setenv("AMP_TRUSTED_USERS", v, 1);
        amp__trust t;
        amp__trust_init(&t, NULL, NULL);
        char why[256] = "";
        if (!amp__trusted_users(&t, why, sizeof why) && !why[0]) abort();
        unsetenv("AMP_TRUSTED_USERS");
        break;
    }
    case 6: {
        char why[512] = "";
        if (!amp__tfile_configure(v, why, sizeof why) && !why[0]) abort();
        break;
    }
    default: {
        /* stream's command line: the value split at spaces into words. */
        char *argv[34] = {(char *)"stream"};
        int argc = 1;
        for (char *t = strtok(v, " "); t && argc < 33; t = strtok(NULL, " "))
            if (strcmp(t, "--list") && strcmp(t, "--help") && strcmp(t, "-h")) argv[argc++] = t;
        argv[argc] = NULL;
        options o;
        int rc = parse(argc, argv, &o);
        if (rc == 0) {
            if (o.n < 1 || o.n > MAX_ARRAY_SIZE || o.times < 2 || o.times > INT_MAX) abort();
            if (o.block_size && (o.block_size < 1 || o.block_size > 1024)) abort();
            amp_extent e = array_shape(&o);
            (void)e;
        }
        break;
    }
    }
    unsetenv("AMP_FZ");
    free(v);
    return 0;
}
