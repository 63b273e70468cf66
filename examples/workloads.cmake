# workloads.cmake — included from examples/CMakeLists.txt: the transpose/matmul workload library (kernels embedded with hipamp_embed) and the study program (the README demo); `cmake --build build --target run_study` builds and runs it.
add_library(hipamp_workloads STATIC ${CMAKE_CURRENT_LIST_DIR}/workloads.c)
target_include_directories(hipamp_workloads PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(hipamp_workloads PUBLIC hipamp::hipamp m)
target_compile_options(hipamp_workloads PRIVATE -Wall -Wextra)
hipamp_embed(hipamp_workloads ${CMAKE_CURRENT_LIST_DIR}/kernels/transpose.hip wl_transpose_source)
hipamp_embed(hipamp_workloads ${CMAKE_CURRENT_LIST_DIR}/kernels/matmul.hip wl_matmul_source)

add_executable(study ${CMAKE_CURRENT_LIST_DIR}/study.c)
target_link_libraries(study PRIVATE hipamp_workloads)
target_compile_options(study PRIVATE -Wall -Wextra)

add_custom_target(run_study COMMAND study DEPENDS study USES_TERMINAL
  COMMENT "Transpose and matmul study on the default accelerator")
