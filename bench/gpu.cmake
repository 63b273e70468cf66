# gpu.cmake — included from bench/CMakeLists.txt: bench_gpu, the GPU benchmark report (hipamp vs raw cuLaunchKernel, device copy, cuBLAS), built only where the CUDA toolkit is found; cuBLAS is loaded at run time.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND AND TARGET CUDA::cuda_driver AND TARGET CUDA::nvrtc)
  if(NOT TARGET hipamp_workloads)
    include(${CMAKE_CURRENT_LIST_DIR}/../examples/workloads.cmake)
  endif()
  add_executable(bench_gpu ${CMAKE_CURRENT_LIST_DIR}/bench_gpu.c)
  target_link_libraries(bench_gpu PRIVATE hipamp_workloads CUDA::cuda_driver CUDA::nvrtc ${CMAKE_DL_LIBS} m)
  # lib/signature.h: the launch_info and argument-pack layout of the raw launches.
  target_include_directories(bench_gpu PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../lib)
  target_compile_options(bench_gpu PRIVATE -Wall -Wextra)
  target_compile_definitions(bench_gpu PRIVATE
    HIPAMP_BENCH_RESULTS="${CMAKE_CURRENT_LIST_DIR}/results"
    HIPAMP_PLOT_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/plot_results.py")
  message(STATUS "hipamp: bench_gpu enabled (CUDA ${CUDAToolkit_VERSION})")
else()
  message(STATUS "hipamp: bench_gpu skipped (no CUDA toolkit)")
endif()
