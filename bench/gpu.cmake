# gpu.cmake — included from bench/CMakeLists.txt: the GPU benchmark report (hipamp vs raw driver launches, device copy, vendor SGEMM) built once per vendor from the same sources (bench_gpu.c, its sections gpu_*.c and their harness): bench_gpu over CUDA (where the CUDA toolkit is found) and bench_gpu_hip over HIP (where the HIP headers and libamdhip64 are found); the vendor BLAS is loaded at run time.
find_package(CUDAToolkit QUIET)
set(_hipamp_bench_cuda OFF)
if(CUDAToolkit_FOUND AND TARGET CUDA::cuda_driver AND TARGET CUDA::nvrtc)
  set(_hipamp_bench_cuda ON)
endif()

# ROCm installs under $ROCM_PATH or /opt/rocm; distribution packages (Debian's
# libamdhip64-dev) under /usr. hipRTC is its own library from ROCm 6 and lives
# inside libamdhip64 before that, so it is linked only where found.
find_path(HIPAMP_BENCH_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS $ENV{ROCM_PATH}/include /opt/rocm/include)
find_library(HIPAMP_BENCH_AMDHIP64 amdhip64 HINTS $ENV{ROCM_PATH}/lib /opt/rocm/lib)
find_library(HIPAMP_BENCH_HIPRTC hiprtc HINTS $ENV{ROCM_PATH}/lib /opt/rocm/lib)
set(_hipamp_bench_hip OFF)
if(HIPAMP_BENCH_HIP_INCLUDE_DIR AND HIPAMP_BENCH_AMDHIP64 AND EXISTS ${HIPAMP_BENCH_HIP_INCLUDE_DIR}/hip/hiprtc.h)
  set(_hipamp_bench_hip ON)
endif()

if((_hipamp_bench_cuda OR _hipamp_bench_hip) AND NOT TARGET hipamp_workloads)
  include(${CMAKE_CURRENT_LIST_DIR}/../examples/workloads.cmake)
endif()

# One report program: bench_gpu.c, its sections and their harness over one
# vendor layer (raw_gpu.h). A new section adds its file here.
set(HIPAMP_BENCH_GPU_SOURCES bench_gpu.c gpu_harness.c gpu_png.c gpu_study.c gpu_launch.c gpu_cache.c gpu_two_gpus.c
  gpu_hip_vs_cuda.c gpu_graph.c gpu_algorithms.c gpu_stream.c)
function(hipamp_bench_gpu target vendor_source)
  set(_sources)
  foreach(_s IN LISTS HIPAMP_BENCH_GPU_SOURCES)
    list(APPEND _sources ${CMAKE_CURRENT_LIST_DIR}/${_s})
  endforeach()
  add_executable(${target} ${_sources} ${CMAKE_CURRENT_LIST_DIR}/${vendor_source})
  # stream_kernels: examples/stream's kernels, the stream section's text.
  target_link_libraries(${target} PRIVATE hipamp_workloads hipamp_graph_work hipamp_first_call stream_kernels ${CMAKE_DL_LIBS} m)
  # lib/base/signature.h: the launch_info and argument-pack layout of the raw launches.
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../lib ${CMAKE_CURRENT_LIST_DIR}/../lib/gpu)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  target_compile_definitions(${target} PRIVATE
    HIPAMP_BENCH_RESULTS="${CMAKE_CURRENT_LIST_DIR}/results"
    HIPAMP_PLOT_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/plot_results.py")
endfunction()

if(_hipamp_bench_cuda)
  hipamp_bench_gpu(bench_gpu raw_cuda.c)
  target_link_libraries(bench_gpu PRIVATE CUDA::cuda_driver CUDA::nvrtc)
  message(STATUS "hipamp: bench_gpu enabled (CUDA ${CUDAToolkit_VERSION})")
else()
  message(STATUS "hipamp: bench_gpu skipped (no CUDA toolkit)")
endif()

# cub_ref: the CUB side of the algorithms section (bench_gpu runs it beside
# itself), compiled by nvcc for the architectures in HIPAMP_CUB_ARCHS (plus
# PTX of the last for newer GPUs). Not part of the default build (a CUB
# compile takes minutes): `cmake --build build --target cub_ref`, which
# ci/gpu.sh figures does.
if(_hipamp_bench_cuda)
  set(HIPAMP_CUB_ARCHS "80;90" CACHE STRING "GPU architectures bench/cub_ref.cu is compiled for (sm_NN numbers)")
  set(_nvcc "${CUDAToolkit_NVCC_EXECUTABLE}")
  if(NOT _nvcc)
    find_program(_nvcc nvcc HINTS ${CUDAToolkit_BIN_DIR})
  endif()
  if(_nvcc)
    set(_gencode)
    foreach(_a IN LISTS HIPAMP_CUB_ARCHS)
      list(APPEND _gencode -gencode arch=compute_${_a},code=sm_${_a})
      set(_last ${_a})
    endforeach()
    list(APPEND _gencode -gencode arch=compute_${_last},code=compute_${_last})
    add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/cub_ref
      COMMAND ${_nvcc} -O3 -std=c++17 ${_gencode} -o ${CMAKE_CURRENT_BINARY_DIR}/cub_ref ${CMAKE_CURRENT_LIST_DIR}/cub_ref.cu
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cub_ref.cu
      COMMENT "nvcc: bench/cub_ref.cu (the CUB reference of the algorithms benchmark)" VERBATIM)
    add_custom_target(cub_ref DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/cub_ref)
  endif()
endif()

if(_hipamp_bench_hip)
  hipamp_bench_gpu(bench_gpu_hip raw_hip.c)
  # SYSTEM: warnings are for this project's code, not for the HIP headers.
  target_include_directories(bench_gpu_hip SYSTEM PRIVATE ${HIPAMP_BENCH_HIP_INCLUDE_DIR})
  target_compile_definitions(bench_gpu_hip PRIVATE __HIP_PLATFORM_AMD__)
  target_link_libraries(bench_gpu_hip PRIVATE ${HIPAMP_BENCH_AMDHIP64})
  if(HIPAMP_BENCH_HIPRTC)
    target_link_libraries(bench_gpu_hip PRIVATE ${HIPAMP_BENCH_HIPRTC})
  endif()
  message(STATUS "hipamp: bench_gpu_hip enabled (HIP: ${HIPAMP_BENCH_AMDHIP64})")
else()
  message(STATUS "hipamp: bench_gpu_hip skipped (no HIP headers with hiprtc.h, or no libamdhip64)")
endif()
