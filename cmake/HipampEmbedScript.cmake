# HipampEmbedScript.cmake — run by hipamp_embed() with -DIN -DOUT -DSYMBOL:
# writes IN's bytes as a NUL-terminated C char array named SYMBOL into OUT,
# 16 bytes a line (tools/hipamp_embed.c writes the same bytes).
file(READ "${IN}" _hex HEX)
# Character constants ('\xhh'), not integers (0xhh): a byte over 0x7f as an
# integer overflows a signed char (-Woverflow in C, narrowing in C++).
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," _bytes "${_hex}")
# A NUL byte is refused, as hipamp-embed and amp_program_build_file refuse it:
# the array is a C string, and amp_program_build would stop at it.
string(FIND "${_bytes}" "'\\x00'," _nul)
if(_nul GREATER -1)
  math(EXPR _at "${_nul} / 7")
  message(FATAL_ERROR "hipamp_embed: ${IN} contains a NUL byte (at offset ${_at}): a kernel source is text")
endif()
# 16 bytes a line (CMake's regex has no {16}: the group is written out).
string(REPEAT "'\\\\x[0-9a-f][0-9a-f]'," 16 _sixteen)
string(REGEX REPLACE "(${_sixteen})" "\\1\n" _bytes "${_bytes}")
get_filename_component(_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${_dir}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN}; do not edit */\nconst char ${SYMBOL}[] = {\n${_bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
