# HipampEmbed.cmake — hipamp_embed(): turn a kernel source file (.hip) into a C
# source defining `const char SYMBOL[]` (NUL-terminated), regenerated whenever
# the file changes. Used by the library for its preludes and by users (via
# find_package(hipamp)) for their own kernel files:
#
#   hipamp_embed(my_app kernels/transpose.hip transpose_source)
#   /* in C: */ extern const char transpose_source[];
#
# hipamp_embed(<target> <file> <symbol>) adds the generated source to <target>.
set(_HIPAMP_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/HipampEmbedScript.cmake")

function(hipamp_embed target file symbol)
  get_filename_component(_abs "${file}" ABSOLUTE)
  set(_out "${CMAKE_CURRENT_BINARY_DIR}/hipamp_embed/${symbol}.c")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND "${CMAKE_COMMAND}" -DIN=${_abs} -DOUT=${_out} -DSYMBOL=${symbol}
            -P "${_HIPAMP_EMBED_SCRIPT}"
    DEPENDS "${_abs}" "${_HIPAMP_EMBED_SCRIPT}"
    COMMENT "Embedding ${file} as ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")
endfunction()
