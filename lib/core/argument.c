/* argument.c — kernel arguments (amp_arg): their constructors, the kernel-side
 * type each kind binds, and checking one argument against its parameter in
 * a signature record and putting a value argument into the pack. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define AMP__ARG_FN(fn, T, K, field) \
    amp_arg fn(T x)                  \
    {                                \
        amp_arg a;                   \
        memset(&a, 0, sizeof a);     \
        a.kind = K;                  \
        a.u.field = x;               \
        return a;                    \
    }
AMP__ARG_FN(amp_arg_view, amp_array_view *, AMP_ARG_VIEW, view)
AMP__ARG_FN(amp_arg_array, amp_array *, AMP_ARG_ARRAY, array)
AMP__ARG_FN(amp_arg_int8, int8_t, AMP_ARG_INT8, i8)
AMP__ARG_FN(amp_arg_uint8, uint8_t, AMP_ARG_UINT8, u8)
AMP__ARG_FN(amp_arg_int16, int16_t, AMP_ARG_INT16, i16)
AMP__ARG_FN(amp_arg_uint16, uint16_t, AMP_ARG_UINT16, u16)
AMP__ARG_FN(amp_arg_int32, int32_t, AMP_ARG_INT32, i32)
AMP__ARG_FN(amp_arg_uint32, uint32_t, AMP_ARG_UINT32, u32)
AMP__ARG_FN(amp_arg_int64, int64_t, AMP_ARG_INT64, i64)
AMP__ARG_FN(amp_arg_uint64, uint64_t, AMP_ARG_UINT64, u64)
AMP__ARG_FN(amp_arg_float32, float, AMP_ARG_FLOAT32, f32)
AMP__ARG_FN(amp_arg_float64, double, AMP_ARG_FLOAT64, f64)
AMP__ARG_FN(amp_arg_bool, bool, AMP_ARG_BOOL, b)
#undef AMP__ARG_FN

amp_arg amp_arg_struct(const void *data, size_t size)
{
    amp_arg a;
    memset(&a, 0, sizeof a);
    a.kind = AMP_ARG_STRUCT;
    a.u.bytes.data = data;
    a.u.bytes.size = size;
    return a;
}

const char *amp__kind_name(int kind)
{
    switch (kind) {
    case AMP_ARG_VIEW: return "array_view";
    case AMP_ARG_ARRAY: return "array";
    case AMP_ARG_INT8: return "int8 (signed char)";
    case AMP_ARG_UINT8: return "uint8 (unsigned char)";
    case AMP_ARG_INT16: return "int16 (short)";
    case AMP_ARG_UINT16: return "uint16 (unsigned short)";
    case AMP_ARG_INT32: return "int32 (int)";
    case AMP_ARG_UINT32: return "uint32 (unsigned)";
    case AMP_ARG_INT64: return "int64 (long long)";
    case AMP_ARG_UINT64: return "uint64 (unsigned long long)";
    case AMP_ARG_FLOAT32: return "float32 (float)";
    case AMP_ARG_FLOAT64: return "float64 (double)";
    case AMP_ARG_BOOL: return "bool";
    case AMP_ARG_STRUCT: return "struct";
    }
    /* Named, for the message that quotes it (a zeroed amp_arg is kind 0):
     * this thread's until its next call. */
    static _Thread_local char unknown[48];
    snprintf(unknown, sizeof unknown, "kind %d (not an amp_arg_kind)", kind);
    return unknown;
}

amp_status amp__arg_check_value(const char *kernel, int i, const amp__sig_param *p, const amp_arg *a)
{
    if ((int32_t)a->kind != p->kind) {
        if (p->kind == AMP_ARG_STRUCT)
            return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                             "kernel '%s' parameter %d is a %d-byte struct; argument is %s (pass it with "
                             "amp_arg_struct)", kernel, i, p->size, amp__kind_name(a->kind));
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' parameter %d is %s; argument is %s", kernel, i,
                         amp__kind_name(p->kind), amp__kind_name(a->kind));
    }
    if (a->kind == AMP_ARG_STRUCT) {
        if (!a->u.bytes.data)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel '%s' parameter %d: struct data is NULL", kernel, i);
        if (a->u.bytes.size != (size_t)p->size)
            return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                             "kernel '%s' parameter %d is a struct of %d bytes (alignment %d); argument has %zu "
                             "bytes", kernel, i, p->size, p->align, a->u.bytes.size);
    }
    return AMP_OK;
}

void amp__arg_put_value(unsigned char *pack, const amp__sig_param *p, const amp_arg *a)
{
    unsigned char *at = pack + p->offset;
    if (a->kind == AMP_ARG_STRUCT) {
        memcpy(at, a->u.bytes.data, (size_t)p->size);
        return;
    }
    /* bool is stored as C++'s bool: one byte, 0 or 1. */
    if (a->kind == AMP_ARG_BOOL) {
        at[0] = a->u.b ? 1 : 0;
        return;
    }
    /* Every other value member starts the union, little or big endian alike,
     * at its own width. */
    switch (amp__kind_width(a->kind)) {
    case 1: memcpy(at, &a->u.u8, 1); break;
    case 2: memcpy(at, &a->u.u16, 2); break;
    case 4: memcpy(at, &a->u.u32, 4); break;
    case 8: memcpy(at, &a->u.u64, 8); break;
    }
}
