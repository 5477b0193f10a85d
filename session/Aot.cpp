//===- Aot.cpp - A model compiled ahead of time ---------------------------===//

#include "session/Aot.h"

using namespace tfc;
using namespace tfc::session;

llvm::Expected<AotOutput>
session::writeAheadOfTime(const CompiledModel &model,
                          const codegen::AotOptions &aot, AotFormat format) {
  if (model.stage != Stage::Planned)
    return llvm::createStringError(
        "compiling ahead of time needs a planned model");
  llvm::Expected<codegen::AotResult> written =
      format == AotFormat::Library ? codegen::compileAot(model.built, aot)
                                   : codegen::emitSources(model.built, aot);
  if (!written)
    return written.takeError();
  return AotOutput{std::move(*written), model.plan().kernels.size()};
}
