# example_stream_usage.cmake — ctest's example_stream_usage: every bad argument of examples/stream ends it with exit status 2 and a message on stderr that names the bad value (run as cmake -DSTREAM=<path> -P this file).
cmake_minimum_required(VERSION 3.16)
set(_cases
  "--arraysize|0|'0'"
  "--arraysize|12x|'12x'"
  "--arraysize| 12|' 12'"
  "--numtimes| 5|' 5'"
  "--arraysize|2147483649|'2147483649'"
  "--arraysize|1099511627777|'1099511627777'"
  "--numtimes|1|'1'"
  "--dot|fast|'fast'"
  "--block-size|0|'0'"
  "--block-size|1025|'1025'"
  "--block-size|x|'x'"
  "--device|nowhere:7|'nowhere:7'"
  "--bogus||'--bogus'"
  "--arraysize||--arraysize needs a value")
foreach(_c IN LISTS _cases)
  string(REPLACE "|" ";" _parts "${_c}")
  list(GET _parts 0 _opt)
  list(GET _parts 1 _val)
  list(GET _parts 2 _want)
  if(_val STREQUAL "")
    set(_args ${_opt})
  else()
    set(_args ${_opt} ${_val})
  endif()
  execute_process(COMMAND ${STREAM} ${_args} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 2)
    message(FATAL_ERROR "stream ${_args}: exit status ${_rc}, want 2\nstdout: ${_out}\nstderr: ${_err}")
  endif()
  string(FIND "${_err}" "${_want}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "stream ${_args}: stderr does not name ${_want}:\n${_err}")
  endif()
  if(NOT _out STREQUAL "")
    message(FATAL_ERROR "stream ${_args}: ran (stdout: ${_out})")
  endif()
endforeach()
message(STATUS "every bad argument gave exit status 2 and named its value")
