# cuda_architectures.cmake — which GPU architectures the CUDA part is built
# for: PTSIM_CUDA_ARCHITECTURES, a CMake CUDA_ARCHITECTURES list.
#
# Every architecture costs a device compile of every core file, so the
# default builds what this machine needs: the compute capability of each
# GPU nvidia-smi reports (machine code plus its PTX, which newer GPUs
# compile at load time), or, with no GPU, Hopper's (sm_90: H100, H200,
# GH200).  `-DPTSIM_CUDA_ARCHITECTURES=all` builds every generation ptsim
# has a hardware profile of (Ampere sm_80, which also runs on sm_86/sm_89,
# Hopper sm_90, Blackwell sm_100 and sm_120) plus PTX for later GPUs: what
# CI compiles once.  Any other value is passed to CMake as it is (e.g. 80,
# "90;100").
set(PTSIM_CUDA_ARCHITECTURES "" CACHE STRING
    "GPU architectures of the CUDA part: empty (this machine's GPUs, else 90), all, or a CUDA_ARCHITECTURES list")
set(PTSIM_CUDA_ARCHITECTURES_ALL "80-real;90-real;100-real;120")

if(PTSIM_CUDA_ARCHITECTURES STREQUAL "all")
  set(PTSIM_CUDA_ARCHITECTURES "${PTSIM_CUDA_ARCHITECTURES_ALL}")
elseif(PTSIM_CUDA_ARCHITECTURES STREQUAL "")
  set(detected "")
  find_program(PTSIM_NVIDIA_SMI nvidia-smi)
  if(PTSIM_NVIDIA_SMI)
    execute_process(COMMAND ${PTSIM_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE smi_rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(smi_rc EQUAL 0)
      string(REPLACE "\n" ";" caps "${caps}")
      foreach(cap ${caps})
        string(REPLACE "." "" cap "${cap}")
        string(STRIP "${cap}" cap)
        if(cap MATCHES "^[0-9]+$")
          list(APPEND detected ${cap})
        endif()
      endforeach()
      list(REMOVE_DUPLICATES detected)
    endif()
  endif()
  if(detected)
    set(PTSIM_CUDA_ARCHITECTURES "${detected}")
    message(STATUS "ptsim: CUDA architectures of this machine's GPUs: ${detected}")
  else()
    set(PTSIM_CUDA_ARCHITECTURES "90")
  endif()
endif()
