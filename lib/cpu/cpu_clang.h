/* cpu_clang.h — the part of libclang's stable C API (clang-c/Index.h) the CPU accelerator's loop transformation uses, declared here and loaded at run time with dlopen, so the library has no build or link dependency on libclang. */
#ifndef AMP_CPU_CLANG_H
#define AMP_CPU_CLANG_H

#include "base/core.h"

#include <stdbool.h>
#include <stddef.h>

/* The C API's value types, laid out as clang-c/Index.h declares them (that
 * header promises these layouts across versions). Enumerations travel as
 * int. */
typedef struct amp__cx_string { const void *data; unsigned private_flags; } amp__cx_string;
typedef struct amp__cx_cursor { int kind; int xdata; const void *data[3]; } amp__cx_cursor;
typedef struct amp__cx_type { int kind; void *data[2]; } amp__cx_type;
typedef struct amp__cx_loc { const void *ptr_data[2]; unsigned int_data; } amp__cx_loc;
typedef struct amp__cx_range { const void *ptr_data[2]; unsigned begin_int_data, end_int_data; } amp__cx_range;
typedef struct amp__cx_token { unsigned int_data[4]; void *ptr_data; } amp__cx_token;
typedef struct amp__cx_unsaved { const char *filename; const char *contents; unsigned long length; } amp__cx_unsaved;
typedef void *amp__cx_index;
typedef void *amp__cx_tu;
typedef void *amp__cx_file;
typedef void *amp__cx_diag;
typedef int (*amp__cx_visitor)(amp__cx_cursor c, amp__cx_cursor parent, void *data);
typedef void (*amp__cx_inclusion_visitor)(amp__cx_file included, amp__cx_loc *stack, unsigned depth, void *data);

/* Cursor kinds (enum CXCursorKind). */
enum {
    AMP__CX_StructDecl = 2, AMP__CX_UnionDecl = 3, AMP__CX_ClassDecl = 4, AMP__CX_EnumDecl = 5,
    AMP__CX_FieldDecl = 6, AMP__CX_EnumConstantDecl = 7, AMP__CX_FunctionDecl = 8, AMP__CX_VarDecl = 9,
    AMP__CX_ParmDecl = 10, AMP__CX_TypedefDecl = 20, AMP__CX_CXXMethod = 21, AMP__CX_Namespace = 22,
    AMP__CX_LinkageSpec = 23, AMP__CX_Constructor = 24, AMP__CX_Destructor = 25,
    AMP__CX_ConversionFunction = 26, AMP__CX_FunctionTemplate = 30, AMP__CX_ClassTemplate = 31,
    AMP__CX_TypeAliasDecl = 36, AMP__CX_TypeRef = 43, AMP__CX_TemplateRef = 45,
    AMP__CX_UnexposedExpr = 100, AMP__CX_DeclRefExpr = 101, AMP__CX_MemberRefExpr = 102,
    AMP__CX_CallExpr = 103, AMP__CX_IntegerLiteral = 106, AMP__CX_FloatingLiteral = 107,
    AMP__CX_StringLiteral = 109, AMP__CX_CharacterLiteral = 110, AMP__CX_ParenExpr = 111,
    AMP__CX_UnaryOperator = 112, AMP__CX_ArraySubscriptExpr = 113, AMP__CX_BinaryOperator = 114,
    AMP__CX_CompoundAssignOperator = 115, AMP__CX_ConditionalOperator = 116,
    AMP__CX_CStyleCastExpr = 117, AMP__CX_InitListExpr = 119, AMP__CX_CXXStaticCastExpr = 124,
    AMP__CX_CXXFunctionalCastExpr = 128, AMP__CX_CXXBoolLiteralExpr = 130,
    AMP__CX_CXXNullPtrLiteralExpr = 131, AMP__CX_CXXThrowExpr = 133, AMP__CX_UnaryExpr = 136,
    AMP__CX_LambdaExpr = 144,
    AMP__CX_UnexposedStmt = 200, AMP__CX_LabelStmt = 201, AMP__CX_CompoundStmt = 202,
    AMP__CX_CaseStmt = 203, AMP__CX_DefaultStmt = 204, AMP__CX_IfStmt = 205, AMP__CX_SwitchStmt = 206,
    AMP__CX_WhileStmt = 207, AMP__CX_DoStmt = 208, AMP__CX_ForStmt = 209, AMP__CX_GotoStmt = 210,
    AMP__CX_IndirectGotoStmt = 211, AMP__CX_ContinueStmt = 212, AMP__CX_BreakStmt = 213,
    AMP__CX_ReturnStmt = 214, AMP__CX_AsmStmt = 215, AMP__CX_CXXCatchStmt = 223,
    AMP__CX_CXXTryStmt = 224, AMP__CX_CXXForRangeStmt = 225, AMP__CX_NullStmt = 230,
    AMP__CX_DeclStmt = 231,
    AMP__CX_MacroDefinition = 501, AMP__CX_MacroExpansion = 502,
};
/* Type kinds (enum CXTypeKind) used. */
enum {
    AMP__CXT_Invalid = 0, AMP__CXT_Bool = 3, AMP__CXT_Int128 = 20, /* the integer kinds: Bool to Int128 */
    AMP__CXT_LongDouble = 23, /* the floating kinds: Int128 + 1 (float) to LongDouble */
    AMP__CXT_Pointer = 101, AMP__CXT_LValueReference = 103,
    AMP__CXT_RValueReference = 104, AMP__CXT_Record = 105, AMP__CXT_Enum = 106,
    AMP__CXT_ConstantArray = 112, AMP__CXT_IncompleteArray = 114, AMP__CXT_VariableArray = 115,
    AMP__CXT_DependentSizedArray = 116, AMP__CXT_MemberPointer = 117,
};
/* Token kinds, diagnostic severities, storage classes, TLS kinds, parse
 * options, visitor results. */
enum { AMP__CXTOK_Punctuation = 0, AMP__CXTOK_Keyword = 1, AMP__CXTOK_Identifier = 2,
       AMP__CXTOK_Literal = 3, AMP__CXTOK_Comment = 4 };
enum { AMP__CXD_Error = 3, AMP__CXD_Fatal = 4 };
enum { AMP__CXSC_Static = 3 };
enum { AMP__CXTLS_None = 0 };
enum { AMP__CXTU_DetailedPreprocessingRecord = 0x01, AMP__CXTU_ForSerialization = 0x10, AMP__CXTU_KeepGoing = 0x200 };
enum { AMP__CXV_Break = 0, AMP__CXV_Continue = 1, AMP__CXV_Recurse = 2 };

/* X(return type, name, parameter list): every function the library calls. */
#define AMP__CLANG_FUNCS(X)                                                                          \
    X(amp__cx_index, clang_createIndex, (int, int))                                                   \
    X(void, clang_disposeIndex, (amp__cx_index))                                                      \
    X(void, clang_toggleCrashRecovery, (unsigned))                                                    \
    X(int, clang_parseTranslationUnit2,                                                               \
      (amp__cx_index, const char *, const char *const *, int, amp__cx_unsaved *, unsigned, unsigned,  \
       amp__cx_tu *))                                                                                 \
    X(void, clang_disposeTranslationUnit, (amp__cx_tu))                                               \
    X(unsigned, clang_getNumDiagnostics, (amp__cx_tu))                                                \
    X(amp__cx_diag, clang_getDiagnostic, (amp__cx_tu, unsigned))                                      \
    X(int, clang_getDiagnosticSeverity, (amp__cx_diag))                                               \
    X(amp__cx_string, clang_formatDiagnostic, (amp__cx_diag, unsigned))                               \
    X(void, clang_disposeDiagnostic, (amp__cx_diag))                                                  \
    X(const char *, clang_getCString, (amp__cx_string))                                               \
    X(void, clang_disposeString, (amp__cx_string))                                                    \
    X(amp__cx_string, clang_getClangVersion, (void))                                                  \
    X(amp__cx_cursor, clang_getTranslationUnitCursor, (amp__cx_tu))                                   \
    X(unsigned, clang_visitChildren, (amp__cx_cursor, amp__cx_visitor, void *))                       \
    X(int, clang_getCursorKind, (amp__cx_cursor))                                                     \
    X(amp__cx_string, clang_getCursorSpelling, (amp__cx_cursor))                                      \
    X(amp__cx_string, clang_getCursorUSR, (amp__cx_cursor))                                           \
    X(amp__cx_range, clang_getCursorExtent, (amp__cx_cursor))                                         \
    X(amp__cx_loc, clang_getCursorLocation, (amp__cx_cursor))                                         \
    X(amp__cx_loc, clang_getRangeStart, (amp__cx_range))                                              \
    X(amp__cx_loc, clang_getRangeEnd, (amp__cx_range))                                                \
    X(amp__cx_range, clang_getRange, (amp__cx_loc, amp__cx_loc))                                      \
    X(void, clang_getFileLocation, (amp__cx_loc, amp__cx_file *, unsigned *, unsigned *, unsigned *)) \
    X(void, clang_getSpellingLocation, (amp__cx_loc, amp__cx_file *, unsigned *, unsigned *, unsigned *)) \
    X(void, clang_getPresumedLocation, (amp__cx_loc, amp__cx_string *, unsigned *, unsigned *))       \
    X(amp__cx_file, clang_getFile, (amp__cx_tu, const char *))                                        \
    X(amp__cx_loc, clang_getLocationForOffset, (amp__cx_tu, amp__cx_file, unsigned))                  \
    X(int, clang_File_isEqual, (amp__cx_file, amp__cx_file))                                          \
    X(int, clang_Location_isInSystemHeader, (amp__cx_loc))                                            \
    X(amp__cx_cursor, clang_getCursorReferenced, (amp__cx_cursor))                                    \
    X(amp__cx_cursor, clang_getCursorDefinition, (amp__cx_cursor))                                    \
    X(amp__cx_cursor, clang_getSpecializedCursorTemplate, (amp__cx_cursor))                           \
    X(amp__cx_cursor, clang_getCursorSemanticParent, (amp__cx_cursor))                                \
    X(unsigned, clang_equalCursors, (amp__cx_cursor, amp__cx_cursor))                                 \
    X(int, clang_Cursor_isNull, (amp__cx_cursor))                                                     \
    X(unsigned, clang_isCursorDefinition, (amp__cx_cursor))                                           \
    X(amp__cx_type, clang_getCursorType, (amp__cx_cursor))                                            \
    X(amp__cx_type, clang_getCanonicalType, (amp__cx_type))                                           \
    X(amp__cx_string, clang_getTypeSpelling, (amp__cx_type))                                          \
    X(unsigned, clang_isConstQualifiedType, (amp__cx_type))                                           \
    X(unsigned, clang_isVolatileQualifiedType, (amp__cx_type))                                        \
    X(unsigned, clang_isPODType, (amp__cx_type))                                                      \
    X(amp__cx_type, clang_getPointeeType, (amp__cx_type))                                             \
    X(amp__cx_type, clang_getArrayElementType, (amp__cx_type))                                        \
    X(amp__cx_cursor, clang_getTypeDeclaration, (amp__cx_type))                                       \
    X(int, clang_getNumArgTypes, (amp__cx_type))                                                      \
    X(amp__cx_type, clang_getArgType, (amp__cx_type, unsigned))                                       \
    X(long long, clang_Type_getSizeOf, (amp__cx_type))                                                \
    X(int, clang_Cursor_getNumArguments, (amp__cx_cursor))                                            \
    X(amp__cx_cursor, clang_Cursor_getArgument, (amp__cx_cursor, unsigned))                           \
    X(unsigned, clang_CXXMethod_isConst, (amp__cx_cursor))                                            \
    X(unsigned, clang_CXXMethod_isVirtual, (amp__cx_cursor))                                          \
    X(unsigned, clang_CXXMethod_isStatic, (amp__cx_cursor))                                           \
    X(int, clang_Cursor_getStorageClass, (amp__cx_cursor))                                            \
    X(int, clang_getCursorTLSKind, (amp__cx_cursor))                                                  \
    X(void, clang_tokenize, (amp__cx_tu, amp__cx_range, amp__cx_token **, unsigned *))                \
    X(void, clang_disposeTokens, (amp__cx_tu, amp__cx_token *, unsigned))                             \
    X(int, clang_getTokenKind, (amp__cx_token))                                                       \
    X(amp__cx_range, clang_getTokenExtent, (amp__cx_tu, amp__cx_token))                               \
    X(int, clang_saveTranslationUnit, (amp__cx_tu, const char *, unsigned))                          \
    X(void, clang_getInclusions, (amp__cx_tu, amp__cx_inclusion_visitor, void *))                    \
    X(amp__cx_string, clang_getFileName, (amp__cx_file))

typedef struct amp__clang {
#define AMP__CLANG_PTR(ret, name, args) ret(*name) args;
    AMP__CLANG_FUNCS(AMP__CLANG_PTR)
#undef AMP__CLANG_PTR
    void *handle;
    char path[1024];   /* the library file (resolved) */
    char version[160]; /* clang_getClangVersion() */
    char resource_dir[1024]; /* its builtin headers' directory, "" when it finds them itself */
} amp__clang;

/* The libclang this process would use, without loading it: AMP_LIBCLANG
 * (a path, or "none" to disable the loop transformation), else the newest of
 * the usual install locations. Writes its path and a tag naming the file's
 * identity (path, size, modification time) for the compile cache. Returns
 * false (path and tag "none: <why>") when there is none. Never fails
 * otherwise; does not block beyond stat(). */
bool amp__clang_locate(char *path, size_t path_cap, char *tag, size_t tag_cap);

/* Load the located libclang once per process (thread-safe). Returns the
 * shared, read-only table, or NULL with *why (static text) saying why not.
 * Blocks while the library loads (tens of milliseconds, first call only). */
const amp__clang *amp__clang_get(const char **why);

/* Copy a CXString into buf (truncating) and dispose it. */
void amp__clang_text(const amp__clang *cx, amp__cx_string s, char *buf, size_t cap);

#endif /* AMP_CPU_CLANG_H */
