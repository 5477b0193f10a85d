# The sources of the frontend's two libraries, relative to frontend/: the one
# list that frontend/CMakeLists.txt builds them from and the fuzz build
# (tests/fuzz/CMakeLists.txt, its own CMake project) compiles with the
# sanitizers. Add a new frontend .cpp to one of them and both get it.

# TfcFrontend: lexer, parser, AST (+ dump) and diagnostics; no MLIR dialects.
set(TFC_FRONTEND_SOURCES
  SourceLocation.cpp
  Diagnostics.cpp
  AST.cpp
  Token.cpp
  Lexer.cpp
  Parser.cpp
  ASTPrinter.cpp
  )

# TfcMLIRGen: the elaborator (AST -> tfc dialect) and the model loader.
set(TFC_MLIRGEN_SOURCES
  Value.cpp
  Elaborator.cpp
  Builtins.cpp
  ModelLoader.cpp
  )
