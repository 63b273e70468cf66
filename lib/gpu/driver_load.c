/* driver_load.c — opening a vendor library by the names it goes by, and saying why none opened (each name's dlopen error, where the loader searched), for the drivers' "no GPU" diagnosis. */
#include "gpu_driver.h"

#include "base/core.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

/* dlerror's text when the loader did not find name itself; anything else
 * (a dependency of it missing, a wrong ELF class, an undefined symbol) is
 * worth its own words in the reason. */
static bool just_absent(const char *name, const char *err)
{
    static const char tail[] = ": cannot open shared object file: No such file or directory";
    size_t len = strlen(name);
    return !strncmp(err, name, len) && !strcmp(err + len, tail);
}

void *amp__gpu_dlopen_first(const char *const *names, char *why, size_t n)
{
    char other[384] = "";
    for (size_t i = 0; names[i]; ++i) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            struct link_map *lm = NULL;
            const char *path = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0] ? lm->l_name : names[i];
            if (n && other[0]) snprintf(why, n, "%s (an earlier name did not load: %s)", path, other);
            else if (n) snprintf(why, n, "%s", path);
            return h;
        }
        const char *err = dlerror();
        /* The first real error wins: a library found but not loadable is
         * the answer the user needs, whichever name found it. */
        if (!other[0] && err && !just_absent(names[i], err)) snprintf(other, sizeof other, "%s", err);
    }
    if (!n) return NULL;
    size_t used = (size_t)snprintf(why, n, "%s", names[0]);
    for (size_t i = 1; names[i] && used < n; ++i) used += (size_t)snprintf(why + used, n - used, ", %s", names[i]);
    if (used >= n) return NULL;
    if (other[0]) {
        snprintf(why + used, n - used, ": none loaded (dlopen: %s)", other);
    } else {
        const char *path = amp__env("LD_LIBRARY_PATH");
        snprintf(why + used, n - used, " not found (searched LD_LIBRARY_PATH=%s, the ld.so cache and /lib, /usr/lib)",
                 path ? path : "(unset)");
    }
    return NULL;
}
