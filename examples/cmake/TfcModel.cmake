# TfcModel.cmake: compile a .tfm model with tfc at configure time and add the
# generated library, the way a user's project would (shared by the examples).
#
# Set TFC_DEFAULT_MODEL before include()-ing this file. Cache variables:
# TFC_EXECUTABLE (default: tfc on PATH), TFC_MODEL, TFC_MODEL_SETS
# (e.g. "layers=2;heads=4"), TFC_TARGET (host or cuda), TFC_COMMAND (compile
# or emit). Afterwards TFC_MODEL_TARGET, TFC_MODEL_CLASS and TFC_MODEL_HEADER
# name what the generated glue defined (for bert-tiny: tfc::bert_tiny,
# tfc_generated::BertTiny, "bert_tiny.h").
set(TFC_EXECUTABLE "" CACHE FILEPATH "The tfc compiler (default: tfc on PATH)")
if(NOT TFC_EXECUTABLE)
  find_program(TFC_EXECUTABLE_FOUND tfc REQUIRED)
  set(TFC_EXECUTABLE ${TFC_EXECUTABLE_FOUND})
endif()
set(TFC_MODEL "${TFC_DEFAULT_MODEL}" CACHE FILEPATH "The .tfm model to compile")
set(TFC_MODEL_SETS "" CACHE STRING
  "Config overrides for the model, e.g. layers=2;heads=4")
set(TFC_TARGET "host" CACHE STRING "tfc compile --target: host or cuda")
# compile: a static library of compiled kernels; emit: the kernels as C++
# sources built here by your compiler (tfc emit). The glue is the same.
set(TFC_COMMAND "compile" CACHE STRING "tfc command: compile or emit")
if(NOT TFC_COMMAND MATCHES "^(compile|emit)$")
  message(FATAL_ERROR "TFC_COMMAND must be compile or emit, not '${TFC_COMMAND}'")
endif()

set(_model_dir ${CMAKE_CURRENT_BINARY_DIR}/model)
set(_tfc_args ${TFC_COMMAND} ${TFC_MODEL} --target ${TFC_TARGET} -o ${_model_dir})
foreach(set ${TFC_MODEL_SETS})
  list(APPEND _tfc_args --set ${set})
endforeach()

# Configure time, not build time: the generated glue is include()d below,
# and its target names depend on the model. Re-run when the model changes.
message(STATUS "tfc ${TFC_COMMAND} ${TFC_MODEL} (${TFC_EXECUTABLE})")
execute_process(COMMAND ${TFC_EXECUTABLE} ${_tfc_args}
  RESULT_VARIABLE _tfc_result
  OUTPUT_VARIABLE _tfc_output
  ERROR_VARIABLE _tfc_output)
if(NOT _tfc_result EQUAL 0)
  message(FATAL_ERROR "tfc ${TFC_COMMAND} failed:\n${_tfc_output}")
endif()
message(STATUS "tfc ${TFC_COMMAND}:\n${_tfc_output}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${TFC_MODEL} ${TFC_EXECUTABLE})

# Defines tfc::<model> and sets TFC_MODEL_TARGET, TFC_MODEL_CLASS,
# TFC_MODEL_HEADER.
add_subdirectory(${_model_dir} ${CMAKE_CURRENT_BINARY_DIR}/model-build)
