//===- AotCompiler.cpp - tfc compile: a model as a static library --------===//
//
// Each plan kernel is built for the target (so a CUDA target gets its GPU
// schedules and PTX) and compiled to an object with Target::NoRuntime; one
// object of Halide's standalone runtime serves them all. The objects are
// archived with LLVM's archive writer (no `ar` process: the result must not
// depend on which binutils happen to be installed), and only the archive is
// kept.
//
// This file is compiled with exceptions like the rest of codegen/: the Halide
// calls made here run inside withHalideErrors.
//
//===----------------------------------------------------------------------===//

#include "codegen/AotCompiler.h"
#include "codegen/AotSupport.h"
#include "codegen/KernelBuilder.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace tfc;
using namespace tfc::codegen;
using namespace tfc::codegen::aot;

namespace {

/// Archives `objects` (full paths) into `archivePath`, members named after
/// the files. Deterministic (no timestamps or owners), with a symbol table
/// so that linkers resolve members in any order.
llvm::Error writeArchive(const std::string &archivePath,
                         const std::vector<std::string> &objects) {
  std::vector<llvm::NewArchiveMember> members;
  for (const std::string &object : objects) {
    llvm::Expected<llvm::NewArchiveMember> member =
        llvm::NewArchiveMember::getFile(object, /*Deterministic=*/true);
    if (!member)
      return makeError("cannot read object '" + object +
                       "': " + llvm::toString(member.takeError()));
    // getFile names the member by its full (temporary) path; the file name
    // keeps the archive reproducible and readable in `ar t`.
    member->MemberName = llvm::sys::path::filename(object);
    members.push_back(std::move(*member));
  }
  // The writer only warns about members whose symbols it cannot read, and
  // prints by default; a library must not print, and Halide's ELF objects
  // are always readable.
  llvm::Error err = llvm::writeArchive(
      archivePath, members, llvm::SymtabWritingMode::NormalSymtab,
      llvm::object::Archive::K_GNU, /*Deterministic=*/true, /*Thin=*/false,
      /*OldArchiveBuf=*/nullptr, /*IsEC=*/std::nullopt,
      [](llvm::Error warning) { llvm::consumeError(std::move(warning)); });
  if (err)
    return makeError("cannot write '" + archivePath +
                     "': " + llvm::toString(std::move(err)));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<AotResult> codegen::compileAot(const BuiltPlan &built,
                                              const AotOptions &options) {
  installHalideErrorHandlers();
  llvm::Expected<GeneratedModel> model = prepareModel(built, options);
  if (!model)
    return model.takeError();
  if (llvm::Error err = makeDirectory(options.outputDir))
    return std::move(err);

  AotResult result;
  result.modelName = model->modelName;
  result.className = model->className;

  // Objects are intermediate: they go to a scratch folder that is removed
  // whatever happens, so DIR holds only what a user links.
  llvm::SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tfc-compile", scratch))
    return makeError("cannot create a temporary folder: " + ec.message());
  auto cleanup = llvm::make_scope_exit(
      [&] { llvm::sys::fs::remove_directories(scratch); });

  const Halide::Target kernelTarget =
      options.target.with_feature(Halide::Target::NoRuntime);
  std::vector<std::string> objects;
  const size_t count = built.kernelOps.size();
  for (size_t i = 0; i < count; ++i) {
    const std::string &symbol = model->plan.kernels[i].name;
    if (options.progress)
      options.progress(i, count, symbol);
    llvm::Expected<Kernel> kernel =
        buildKernel(built.kernelOps[i], options.target, symbol);
    if (!kernel)
      return makeError("kernel " + built.plan.kernels[i].name + ": " +
                       llvm::toString(kernel.takeError()));
    std::string object = joinPath(std::string(scratch), symbol + ".o");
    if (llvm::Error err = compileToFiles(
            *kernel, kernelTarget, {{Halide::OutputFileType::object, object}}))
      return makeError("kernel " + built.plan.kernels[i].name + ": " +
                       llvm::toString(std::move(err)));
    objects.push_back(object);
  }

  // One runtime for all kernels: thread pool, allocator, error reporting
  // and, for GPU targets, the device API (which loads libcuda at run time).
  std::string runtimeObject =
      joinPath(std::string(scratch), "halide_runtime.o");
  if (llvm::Error err = withHalideErrors([&] {
        Halide::compile_standalone_runtime(
            runtimeObject,
            options.target.without_feature(Halide::Target::NoRuntime));
      }))
    return makeError("compiling Halide's runtime for " + model->target + ": " +
                     llvm::toString(std::move(err)));
  objects.push_back(runtimeObject);

  std::string archiveName = "lib" + model->modelName + ".a";
  std::string archive = joinPath(options.outputDir, archiveName);
  if (llvm::Error err = writeArchive(archive, objects))
    return std::move(err);
  result.files.push_back({archive, std::to_string(count) +
                                       " kernels + Halide runtime, " +
                                       sizeString(fileSize(archive))});

  std::string header = joinPath(options.outputDir, model->modelName + ".h");
  if (llvm::Error err = writeFile(header, apiHeader(*model)))
    return std::move(err);
  result.files.push_back({header, "class tfc_generated::" + model->className});

  llvm::Expected<std::string> source = apiSource(*model, "tfc compile");
  if (!source)
    return source.takeError();
  std::string sourcePath =
      joinPath(options.outputDir, model->modelName + ".cpp");
  if (llvm::Error err = writeFile(sourcePath, *source))
    return std::move(err);
  result.files.push_back({sourcePath, "embedded plan + kernel table, " +
                                          sizeString(source->size())});

  CMakeKernels kernels;
  kernels.archive = archiveName;
  std::string snippet =
      joinPath(options.outputDir, model->modelName + ".cmake");
  if (llvm::Error err =
          writeFile(snippet, cmakeSnippet(*model, kernels, "tfc compile")))
    return std::move(err);
  result.files.push_back(
      {snippet, "include() it, link tfc::" + model->modelName});
  std::string lists = joinPath(options.outputDir, "CMakeLists.txt");
  if (llvm::Error err = writeFile(lists, cmakeLists(*model)))
    return std::move(err);
  result.files.push_back({lists, "for add_subdirectory()"});

  if (llvm::Error err = copyRuntime(options.runtime, options.outputDir, result))
    return std::move(err);

  const std::string &dir = options.outputDir;
  result.buildCommand = "c++ -std=c++17 -O2 -I " + dir + " -I " + dir +
                        "/include main.cpp " + sourcePath + " " + archive +
                        " " + dir + "/lib/libtfc_runtime.a -lpthread -ldl";
  if (model->usesDevice)
    result.notes.push_back(
        "the kernels run on an NVIDIA GPU: Halide's CUDA runtime (in " +
        archiveName +
        ") loads libcuda.so when the first kernel runs; no CUDA toolkit is "
        "needed to build");
  return result;
}
