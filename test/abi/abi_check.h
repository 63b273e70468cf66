/* abi_check.h — what the ABI tests expand every row of lib/gpu/hip_abi.h and cuda_abi.h into: kind, size and alignment of a type, value of a constant, offset of a field, exact type of a function, all against the vendor header included first. */
#ifndef HIPAMP_TEST_ABI_CHECK_H
#define HIPAMP_TEST_ABI_CHECK_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#define ABI_STR_(x) #x
/* The name after macro expansion: differs from #x when the header maps a
 * name to another symbol (cuda.h's cuMemAlloc -> cuMemAlloc_v2). */
#define ABI_STR(x) ABI_STR_(x)

/* What the C ABI passes a value of type T as: 1 integer (enums included),
 * 2 pointer, 3 struct, 0 anything else. __builtin_classify_type does not
 * evaluate its operand. */
#define ABI_KIND(T)                                                                     \
    (__builtin_classify_type(*(T *)0) == 1 || __builtin_classify_type(*(T *)0) == 3   ? 1 \
     : __builtin_classify_type(*(T *)0) == 5                                          ? 2 \
     : __builtin_classify_type(*(T *)0) == 12                                         ? 3 \
                                                                                      : 0)

static inline const char *abi_kind_name(int kind)
{
    return kind == 1 ? "integer" : kind == 2 ? "pointer" : kind == 3 ? "struct" : "other type";
}

/* X(vendor typedef, our type): the same size, alignment and kind, which is
 * what makes passing one for the other the same at the machine level. */
#define ABI_CHECK_TYPE(vendor, ours)                                                    \
    cr_expect_eq(sizeof(vendor), sizeof(ours), "%s: %zu bytes in the header, %zu as declared (%s)", \
                 #vendor, sizeof(vendor), sizeof(ours), #ours);                         \
    cr_expect_eq(_Alignof(vendor), _Alignof(ours), "%s: aligned to %zu in the header, %zu as declared (%s)", \
                 #vendor, _Alignof(vendor), _Alignof(ours), #ours);                     \
    cr_expect_eq(ABI_KIND(vendor), ABI_KIND(ours), "%s: %s in the header, %s as declared (%s)", #vendor, \
                 abi_kind_name(ABI_KIND(vendor)), abi_kind_name(ABI_KIND(ours)), #ours);

/* X(our name, value, vendor name). */
#define ABI_CHECK_CONSTANT(ours, value, vendor)                                         \
    cr_expect_eq((long long)(value), (long long)(vendor), "%s = %lld as declared, but the header's %s = %lld", \
                 #ours, (long long)(value), #vendor, (long long)(vendor));

/* X(symbol, return type, (parameter types)), the types being the vendor's
 * here (the lists name vendor typedefs; ABI_CHECK_TYPE covers the step from
 * ours to theirs). abi_name_ok decides whether a header macro that maps the
 * symbol to another name is a known, separately checked case. */
#define ABI_CHECK_FUNCTION(name, ret, args)                                             \
    cr_expect(abi_name_ok(#name, ABI_STR(name)),                                        \
              "the header maps %s to %s with a macro: the declaration checked is not the symbol loaded", \
              #name, ABI_STR(name));                                                    \
    cr_expect(__builtin_types_compatible_p(__typeof__(&name), ret(*) args),             \
              "%s: the header declares another type than %s (*)%s", #name, #ret, #args);

/* Field rows of a struct mirror, expanded into a struct of our own
 * (ABI_FIELD) and into offset/size checks against the vendor's struct. */
#define ABI_FIELD(type, name) type name;
#define ABI_CHECK_FIELD_OF(ours, vendor, name)                                          \
    cr_expect_eq(offsetof(ours, name), offsetof(vendor, name), "%s.%s: at byte %zu as declared, %zu in the header", \
                 #vendor, #name, offsetof(ours, name), offsetof(vendor, name));         \
    cr_expect_eq(sizeof(((ours *)0)->name), sizeof(((vendor *)0)->name),                \
                 "%s.%s: %zu bytes as declared, %zu in the header", #vendor, #name,     \
                 sizeof(((ours *)0)->name), sizeof(((vendor *)0)->name));
#define ABI_CHECK_STRUCT_SIZE(ours, vendor)                                             \
    cr_expect_eq(sizeof(ours), sizeof(vendor), "%s: %zu bytes as declared, %zu in the header (a field is missing or extra)", \
                 #vendor, sizeof(ours), sizeof(vendor));                                \
    cr_expect_eq(_Alignof(ours), _Alignof(vendor), "%s: aligned to %zu as declared, %zu in the header", #vendor, \
                 _Alignof(ours), _Alignof(vendor));

#endif
