# TfcPlanBuilder: tfc dialect module -> runtime Plan (codegen/PlanBuilder.h).
# Included from codegen/CMakeLists.txt (and Aot.cmake); the guard makes a
# second include a no-op. Its own library because it needs only MLIR and the
# runtime, not Halide: tools that only plan (tfc dump of a plan, the unit
# tests) do not pay for libHalide.
include_guard(DIRECTORY)
add_mlir_library(TfcPlanBuilder
  PlanBuilder.cpp

  PARTIAL_SOURCES_INTENDED

  LINK_LIBS PUBLIC
  TfcIR
  tfc_runtime
  ${TFC_MLIR_LIBS}
)
