/* trace_probe.c — a stand-in profiler for test_trace.c: an NVTX injection library (InitializeInjectionNvtx2) and a roctx library (roctxRangePushA/Pop) in one, logging every range the process opens and closes to the file AMP_PROBE_LOG names. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The NVTX 3 protocol, declared here from NVIDIA's documentation on its own
 * (not from lib/trace/trace_abi.h), so that the test checks the library against
 * an independent reading of it. */
typedef void (*probe_fn)(void);
typedef struct probe_callbacks {
    size_t struct_size;
    int (*get_module_table)(int module, probe_fn ***table, unsigned *size);
} probe_callbacks;
typedef struct probe_version {
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*set_version)(uint32_t);
} probe_version;
typedef struct probe_attributes { /* nvtxEventAttributes_v2 */
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    const char *message;
} probe_attributes;

static void probe_log(const char *fmt, ...)
{
    const char *path = getenv("AMP_PROBE_LOG");
    if (!path) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) != n) {
    }
    close(fd);
}

static long probe_tid(void) { return (long)syscall(SYS_gettid); }

static void *probe_domain_create(const char *name)
{
    probe_log("domain %s", name);
    static int domain;
    return &domain;
}

static int probe_domain_push(void *domain, const probe_attributes *a)
{
    probe_log("push %ld v%u size%u cat%u color%08x payload%d:%llu msgtype%d %s", probe_tid(), a->version, a->size,
              a->category, a->color, a->payload_type, (unsigned long long)a->payload, a->message_type,
              a->message_type == 1 ? a->message : "?");
    return 0;
}

static int probe_domain_pop(void *domain)
{
    probe_log("pop %ld", probe_tid());
    return 0;
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    const probe_callbacks *cb = get_export_table(1);       /* NVTX_ETID_CALLBACKS */
    const probe_version *ver = get_export_table(3);        /* NVTX_ETID_VERSIONINFO */
    if (!cb || !ver || cb->struct_size < sizeof *cb || get_export_table(2) != NULL) {
        probe_log("init bad export tables");
        return 0;
    }
    probe_log("init nvtx version %u", ver->version);
    probe_fn **core2 = NULL;
    unsigned size = 0;
    if (!cb->get_module_table(5, &core2, &size) || size < 16 || !core2) { /* NVTX_CB_MODULE_CORE2 */
        probe_log("init no core2 table");
        return 0;
    }
    if (cb->get_module_table(0, NULL, NULL) != 0) probe_log("init module 0 accepted");
    *core2[12] = (probe_fn)probe_domain_create; /* DomainCreateA */
    *core2[4] = (probe_fn)probe_domain_push;    /* DomainRangePushEx */
    *core2[5] = (probe_fn)probe_domain_pop;     /* DomainRangePop */
    return 1;
}

int roctxRangePushA(const char *message)
{
    probe_log("rpush %ld %s", probe_tid(), message);
    return 0;
}

int roctxRangePop(void)
{
    probe_log("rpop %ld", probe_tid());
    return 0;
}
