# TfcAot: models as static libraries (tfc compile), C++ source folders
# (tfc emit) and readable pipelines (tfc dump --emit=halide). Included from
# codegen/CMakeLists.txt. Built like TfcCodegen: with exceptions, because
# Halide reports errors by throwing and this library catches them at its
# boundary (withHalideErrors); nothing escapes it.

# The runtime shim that `tfc emit` writes next to emitted kernels is a real
# source file, embedded here as a raw string literal at configure time (and
# re-embedded whenever it changes).
set(_tfc_shim ${CMAKE_CURRENT_SOURCE_DIR}/AotHalideShim.cpp)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_tfc_shim})
file(READ ${_tfc_shim} _tfc_shim_text)
string(FIND "${_tfc_shim_text}" ")tfcshim\"" _tfc_shim_clash)
if(NOT _tfc_shim_clash EQUAL -1)
  message(FATAL_ERROR "AotHalideShim.cpp contains the raw-string delimiter")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/AotHalideShim.inc.tmp
  "R\"tfcshim(${_tfc_shim_text})tfcshim\"\n")
configure_file(${CMAKE_CURRENT_BINARY_DIR}/AotHalideShim.inc.tmp
  ${CMAKE_CURRENT_BINARY_DIR}/AotHalideShim.inc COPYONLY)

# TfcAot needs the Plan builder; include it here if codegen/CMakeLists.txt
# has not (yet), so that the include order there does not matter.
if(NOT TARGET TfcPlanBuilder)
  include(${CMAKE_CURRENT_LIST_DIR}/PlanBuilder.cmake)
endif()

add_library(TfcAot STATIC
  AotApi.cpp
  AotCompiler.cpp
  AotDump.cpp
  AotEmit.cpp
  AotProcessSafety.cpp
)
target_compile_options(TfcAot PRIVATE -fexceptions -fno-rtti)
# AotEmit.cpp includes "codegen/AotHalideShim.inc" from the build tree.
target_include_directories(TfcAot PRIVATE ${PROJECT_BINARY_DIR})
add_dependencies(TfcAot MLIRTfcOpsIncGen)
# LLVM (the shared libLLVM-19) for its archive writer; MLIR/LLVM 19 before
# libHalide14 as everywhere (docs/design.md#build).
target_link_libraries(TfcAot PUBLIC TfcCodegen TfcPlanBuilder tfc_runtime
  LLVM tfc_halide ${CMAKE_DL_LIBS})

# The shim must compile as emitted code does: C++17, no exceptions, only
# HalideRuntime.h. Building it here keeps it from rotting between releases.
add_library(TfcAotShimCheck OBJECT AotHalideShim.cpp)
target_include_directories(TfcAotShimCheck SYSTEM PRIVATE
  $<TARGET_PROPERTY:tfc_halide,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_options(TfcAotShimCheck PRIVATE -fno-exceptions -Wall -Wextra)
add_dependencies(TfcAot TfcAotShimCheck)
