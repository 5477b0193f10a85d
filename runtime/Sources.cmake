# The sources of tfc_runtime, relative to runtime/: the one list that
# runtime/CMakeLists.txt builds the library from and the fuzz build
# (tests/fuzz/CMakeLists.txt, its own CMake project) compiles with the
# sanitizers. Add a new runtime .cpp here and both get it.
set(TFC_RUNTIME_SOURCES
  BeamSearch.cpp
  Executor.cpp
  FileWriter.cpp
  Files.cpp
  Generator.cpp
  KvCache.cpp
  MappedFile.cpp
  Npy.cpp
  Plan.cpp
  Pooling.cpp
  Safetensors.cpp
  Sampler.cpp
  Seq2Seq.cpp
  Tensor.cpp
  ThreadPool.cpp
  WeightBinding.cpp
  )
