# bad_deck.cmake — ctest's tealeaf_bad_deck: tealeaf on decks with one wrong line each (written here, in the test's directory) must exit 2 with a message naming the deck, the line and what is wrong; decks and problems files that are no regular file, tea.problems lines that must match nothing, summary_frequency's summaries.
#
#   cmake -DTEALEAF=path/to/tealeaf -P bad_deck.cmake
set(_head "*tea\nstate 1 density=100.0 energy=0.0001\nx_cells=4\ny_cells=4\n")
# name | the line that is wrong (line 5 of its deck) | what the message must say
set(_cases
  "unknown_key|x_cels=4|bad_unknown_key.in:5: unknown key 'x_cels'"
  "bad_value|end_step=ten|bad_bad_value.in:5: 'end_step': 'ten' is not an integer"
  "no_value|eps|bad_no_value.in:5: 'eps' needs a value"
  "bad_geometry|state 2 density=1 energy=1 geometry=hexagon xmin=0 xmax=1 ymin=0 ymax=1|bad_bad_geometry.in:5: state 2: unknown geometry 'hexagon'"
  "bad_density|state 2 density=0 energy=1 geometry=rectangle xmin=0 xmax=1 ymin=0 ymax=1|bad_bad_density.in:5: state 2: density must be > 0"
  "state_twice|state 1 density=1 energy=1|bad_state_twice.in:5: state 1 defined twice"
  "infinite_cells|xmin=-1e308 xmax=1e308|bad_infinite_cells.in: cells of inf x"
  "huge_value|xmax=1e999|bad_huge_value.in:5: 'xmax': '1e999' is out of range"
  "presteps|use_chebyshev presteps 1|bad_presteps.in: presteps 1: Chebyshev and PPCG need at least 2"
  "inner_steps|tl_ppcg_inner_steps -1|bad_inner_steps.in: ppcg_inner_steps must be 0 to 1000000 (got -1)"
  "epslim|epslim -1|bad_epslim.in: epslim must be > 0 (got -1)"
  "eps_ppcg|use_ppcg eps 2|bad_eps_ppcg.in: eps 2: Chebyshev and PPCG need eps < 1"
  "huge_density|state 2 density=1e308 energy=25 geometry=rectangle xmin=0 xmax=1 ymin=0 ymax=1|bad_huge_density.in: state 2: density 1e+308, energy 25: the coefficient"
  "huge_timestep|initial_timestep=1e300|bad_huge_timestep.in: state 1: density 100, energy 0.0001: the coefficient"
  "tiny_cells|xmax=1e-200|bad_tiny_cells.in: initial_timestep 0.1 over cells of"
  "negative_radius|state 2 density=1 energy=1 geometry=circle xmin=1 ymin=1 radius=-3|bad_negative_radius.in:5: state 2: a circle of radius -3 covers no point")
# tealeaf on deck must exit 2 saying want.
function(expect_refused deck want)
  execute_process(COMMAND ${TEALEAF} --device cpu ${deck} OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  message("${deck}: exit ${_rc}: ${_err}")
  string(FIND "${_err}" "${want}" _at)
  if(NOT _rc EQUAL 2 OR _at EQUAL -1)
    message(FATAL_ERROR "${deck}: exit ${_rc}, not 2 with \"${want}\" said:\n${_out}${_err}")
  endif()
endfunction()
foreach(_case ${_cases})
  string(REPLACE "|" ";" _f "${_case}")
  list(GET _f 0 _name)
  list(GET _f 1 _line)
  list(GET _f 2 _want)
  file(WRITE "bad_${_name}.in" "${_head}${_line}\nend_step=1\n*endtea\n")
  expect_refused("bad_${_name}.in" "${_want}")
endforeach()
# UK-MAC TeaLeaf's CUDA and OpenCL decks' keys are taken and said to be
# ignored (they were refused as unknown).
# tealeaf with the arguments args (a list) must print want; what names the case.
function(expect_output args want what)
  execute_process(COMMAND ${TEALEAF} --device cpu ${args} OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  string(FIND "${_out}" "${want}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "${what} (exit ${_rc}; wanted \"${want}\"):\n${_out}${_err}")
  endif()
endfunction()
file(WRITE "ukmac.in" "${_head}cuda_device=0\nuse_cuda_kernels\nopencl_device=0\nopencl_vendor=nvidia\nuse_opencl_kernels\nhydro_off\ntea_leaf_on\nprofile_solver\nend_step=1\n*endtea\n")
expect_output("ukmac.in" "Ignored (not used by this port): cuda_device use_cuda_kernels opencl_device opencl_vendor use_opencl_kernels hydro_off tea_leaf_on profile_solver"
  "UK-MAC's keys were not taken and named as ignored")
# A NUL byte in a line (what follows it would go unread) and a directory
# as the deck: refused, exit 2.
execute_process(COMMAND sh -c "printf '*tea\\nstate 1 density=1 energy=1\\nx_cells=4\\ny_cells=4\\nend_step=1\\000 garbage=zzz\\n*endtea\\n' > bad_nul.in")
file(MAKE_DIRECTORY "bad_dir.in")
expect_refused("bad_nul.in" "bad_nul.in:5: a NUL byte in the line")
expect_refused("bad_dir.in" "bad_dir.in: a directory, not a regular file")
# A FIFO as the deck is refused at once (an open for reading waited for a
# writer), and so is a device that reads forever.
execute_process(COMMAND sh -c "rm -f bad_fifo.in && mkfifo bad_fifo.in")
expect_refused("bad_fifo.in" "bad_fifo.in: a FIFO, not a regular file")
expect_refused("/dev/zero" "/dev/zero: a character device, not a regular file")
# Words on the *tea and *endtea lines were dropped unread.
file(WRITE "bad_tea_line.in" "*tea x_cells=99\nstate 1 density=1 energy=1\n*endtea\n")
expect_refused("bad_tea_line.in" "bad_tea_line.in:1: 'x_cells' after '*tea'")
file(WRITE "bad_endtea_line.in" "${_head}end_step=1\n*endtea x_cells=zzz\n")
expect_refused("bad_endtea_line.in" "bad_endtea_line.in:6: 'x_cells' after '*endtea'")
# --device naming no accelerator is a usage error (exit 2), as stream has it.
file(WRITE "device.in" "${_head}end_step=1\n*endtea\n")
execute_process(COMMAND ${TEALEAF} --device no-such-accelerator device.in RESULT_VARIABLE _rc ERROR_VARIABLE _err)
string(FIND "${_err}" "no accelerator no-such-accelerator" _at)
if(NOT _rc EQUAL 2 OR _at EQUAL -1)
  message(FATAL_ERROR "--device no-such-accelerator: exit ${_rc}, not 2: ${_err}")
endif()
# A uniform field is solved at once by every solver: r . r is 0 from the
# start. Chebyshev and PPCG took a CG step from there, 0 / 0, and wrote NaN.
file(WRITE "uniform.in" "*tea\nstate 1 density=1 energy=1\nx_cells=16\ny_cells=16\nxmax=16\nymax=16\ninitial_timestep=1\nend_step=2\n*endtea\n")
foreach(_solver cg chebyshev ppcg jacobi)
  expect_output("--solver;${_solver};uniform.in"
    "2.56000000000000000E+02   2.56000000000000000E+02   1.00000000000000000E+00   2.56000000000000000E+02   2.56000000000000000E+02"
    "--solver ${_solver} on a uniform field: not its field summary (volume, mass, energy and U 256)")
endforeach()
# A point state sets the cell whose lower-left vertex it is (TeaLeaf's
# shift of the point by a hundredth of a cell made it match no cell).
file(WRITE "point.in" "*tea\nstate 1 density=100.0 energy=0.0001\nstate 2 density=1 energy=1000 geometry=point xmin=12.5 ymin=12.5\nx_cells=8\ny_cells=8\nxmax=100\nymax=100\nend_step=1\n*endtea\n")
# One cell of 12.5 x 12.5 at density 1 instead of 100: mass 1e6 - 99 x 156.25.
expect_output("point.in" " step:      1   1.00000000000000000E+04   9.84531250000000000E+05"
  "the point state set no cell (or another)")
# A good deck of the same lines runs (the cases above fail for their line);
# a key only Chebyshev and PPCG use is left alone under CG, as TeaLeaf does.
# A value that underflows to a subnormal (1e-320) is a number, taken.
file(WRITE "good.in" "${_head}presteps 1\ninitial_timestep=1e-320\nend_step=1\n*endtea\n")
execute_process(COMMAND ${TEALEAF} --device cpu good.in OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
string(FIND "${_out}" " step:      1 " _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "the good deck printed no field summary (exit ${_rc}):\n${_out}${_err}")
endif()
# A solver the port does not have, named.
execute_process(COMMAND ${TEALEAF} --device cpu --solver gmres good.in OUTPUT_VARIABLE _out ERROR_VARIABLE _err
  RESULT_VARIABLE _rc)
string(FIND "${_err}" "--solver 'gmres': not cg, chebyshev, ppcg or jacobi" _at)
if(NOT _rc EQUAL 2 OR _at EQUAL -1)
  message(FATAL_ERROR "--solver gmres: exit ${_rc}, not 2 with the solver named:\n${_out}${_err}")
endif()
# Bad arguments: exit 2 with the option or the value named (the words
# before '|' are the arguments after --device cpu).
foreach(_case
    "--check-every;abc;good.in|--check-every 'abc': need a whole number from 1 to 1000000"
    "--check-every;0;good.in|--check-every '0': need a whole number"
    "--check-every;99999999999999999999;good.in|--check-every '99999999999999999999': need"
    "good.in;--problems|--problems needs a value"
    "good.in;other.in|one deck only, given 'good.in' and 'other.in'")
  string(FIND "${_case}" "|" _bar)
  string(SUBSTRING "${_case}" 0 ${_bar} _args)
  math(EXPR _bar "${_bar} + 1")
  string(SUBSTRING "${_case}" ${_bar} -1 _want)
  execute_process(COMMAND ${TEALEAF} --device cpu ${_args} OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  string(FIND "${_err}" "${_want}" _at)
  if(NOT _rc EQUAL 2 OR _at EQUAL -1)
    message(FATAL_ERROR "tealeaf ${_args}: exit ${_rc}, not 2 with \"${_want}\" said:\n${_out}${_err}")
  endif()
endforeach()
# summary_frequency prints TeaLeaf's field summary every so many steps (it
# was read and not acted on); test_problem is said to be ignored.
file(WRITE "summaries.in" "${_head}end_step=3\nsummary_frequency=1\ntest_problem=2\n*endtea\n")
execute_process(COMMAND ${TEALEAF} --device cpu summaries.in OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
foreach(_step 1 2 3)
  string(FIND "${_out}" " step:      ${_step} " _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "summary_frequency=1: no field summary at step ${_step} (exit ${_rc}):\n${_out}${_err}")
  endif()
endforeach()
expect_output("summaries.in" "Ignored (not used by this port): test_problem" "test_problem was not said to be ignored")
# The expected value: a tea.problems line is "x y steps value" and nothing
# more. A line longer than a read buffer was read on as the next line, and
# a count past int's range wrapped: both matched and verified a wrong
# value. A FIFO or a device as the problems file is said, not waited on.
file(MAKE_DIRECTORY "problems")
file(WRITE "problems/deck.in" "${_head}end_step=1\n*endtea\n")
string(REPEAT "#" 600 _long)
foreach(_bad "${_long}4 4 1 1.0e4" "4294967300 4 1 1.0e4" "4 4 1 1.0e4 junk")
  file(WRITE "problems/tea.problems" "${_bad}\n")
  execute_process(COMMAND ${TEALEAF} --device cpu problems/deck.in OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  string(FIND "${_out}" "has no line \"4 4 1\"" _at)
  if(NOT _rc EQUAL 1 OR _at EQUAL -1)
    message(FATAL_ERROR "tea.problems line \"${_bad}\" was taken for 4 4 1 (exit ${_rc}):\n${_out}${_err}")
  endif()
endforeach()
file(REMOVE "problems/tea.problems")
# A NUL inside the line (the fuzzer's): the text before it matched.
# TeaLeaf's own output beside the deck (deck.out), read where tea.problems
# has no line: a step past int's range (sscanf's %d wrapped 4294967297 to
# the deck's end_step 1) or a value that is no finite number matched too.
execute_process(COMMAND sh -c "printf '4 4 1 1.0e4\\000junk\\n' > problems/tea.problems")
foreach(_bad_out "" " step: 4294967297 1 2 3 4 5" " step: 1 1 2 3 4 nan" " step: 1 1 2 3 4 inf")
  if(_bad_out STREQUAL "")
    file(REMOVE "problems/deck.out")
  else()
    file(WRITE "problems/deck.out" " x_cells=4\n y_cells=4\n${_bad_out}\n")
  endif()
  expect_output("problems/deck.in" "has no line \"4 4 1\""
    "tea.problems with a NUL, deck.out \"${_bad_out}\": a value was taken")
endforeach()
# The same output with a good last summary is taken: the checks above are
# not a reader that takes nothing.
file(WRITE "problems/deck.out" " x_cells=4\n y_cells=4\n step: 1 1 2 3 4 5\n")
expect_output("problems/deck.in" "problems/deck.out, its last field summary" "deck.out with a good summary was not read")
file(REMOVE "problems/deck.out")
file(REMOVE "problems/tea.problems")
execute_process(COMMAND sh -c "mkfifo problems/tea.problems")
execute_process(COMMAND ${TEALEAF} --device cpu problems/deck.in OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc
  TIMEOUT 60)
string(FIND "${_out}" "problems/tea.problems: a FIFO, not a regular file" _at)
if(NOT _rc EQUAL 1 OR _at EQUAL -1)
  message(FATAL_ERROR "a FIFO as tea.problems (exit ${_rc}):\n${_out}${_err}")
endif()
file(REMOVE "problems/tea.problems")
