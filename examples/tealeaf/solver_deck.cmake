# solver_deck.cmake — ctest's tealeaf_solver_decks: TeaLeaf's tea_bm_2 deck rewritten (in the test's directory, its reference output beside it) to ask for Chebyshev with TeaLeaf's error switch and for PPCG with 5 inner steps, in both projects' spellings of the keys, and for Jacobi; each must run that solver as asked and verify.
#
#   cmake -DTEALEAF=path/to/tealeaf -DDECKS=dir/with/tea_bm_2.in -P solver_deck.cmake
if(NOT EXISTS "${DECKS}/tea_bm_2.in")
  message("SKIP: no deck at ${DECKS}/tea_bm_2.in")
  return()
endif()
file(READ "${DECKS}/tea_bm_2.in" _deck)
# name | the lines replacing use_cg | what the output must say
set(_cases
  "cheby_errswitch|use_chebyshev\nerrswitch\nepslim 1.0e-5|Switch: from CG once r.r < epslim 1e-05"
  "cheby_presteps|tl_use_chebyshev\ntl_ch_cg_presteps 40|Switch: from CG after presteps 40 + 1 iterations"
  "ppcg_inner|use_ppcg\nppcg_inner_steps 5|Inner:  5 Chebyshev steps an iteration"
  "ppcg_tl|tl_use_ppcg\ntl_ppcg_inner_steps 12\ntl_ch_cg_errswitch\ntl_ch_cg_epslim 1e-4|Inner:  12 Chebyshev steps an iteration"
  "jacobi|use_jacobi|Solver: Jacobi")
foreach(_case ${_cases})
  string(REPLACE "|" ";" _f "${_case}")
  list(GET _f 0 _name)
  list(GET _f 1 _lines)
  list(GET _f 2 _want)
  string(REPLACE "use_cg" "${_lines}" _text "${_deck}")
  file(WRITE "solver_${_name}.in" "${_text}")
  configure_file("${DECKS}/tea_bm_2.out" "solver_${_name}.out" COPYONLY)
  execute_process(COMMAND ${TEALEAF} --device cpu solver_${_name}.in
    OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  message("${_name}: exit ${_rc}")
  foreach(_must "${_want}" "This run PASSED")
    string(FIND "${_out}" "${_must}" _at)
    if(_at EQUAL -1 OR NOT _rc EQUAL 0)
      message(FATAL_ERROR "${_name}: exit ${_rc}, or the output does not say \"${_must}\":\n${_out}${_err}")
    endif()
  endforeach()
  # the solver's own iterations ran (not CG to the end)
  if(NOT _out MATCHES "(\\+ (Chebyshev|PPCG)|Jacobi iterations) +[1-9]")
    message(FATAL_ERROR "${_name}: no Chebyshev or PPCG iterations:\n${_out}")
  endif()
endforeach()
