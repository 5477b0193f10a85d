//===- AotCompiler.cpp - tfc compile: a model as a static library --------===//
//
// Each plan kernel is built for the target (so a CUDA target gets its GPU
// schedules and PTX) and compiled to an object with Target::NoRuntime; one
// object of Halide's standalone runtime serves them all. The objects are
// archived with LLVM's archive writer (no `ar` process: the result must not
// depend on which binutils happen to be installed). Objects and archive are
// built in memory; only the archive is written, atomically (writeFile).
//
// This file is compiled with exceptions like the rest of codegen/: the Halide
// calls made here run inside withHalideErrors.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/AotCompiler.h"
#include "codegen/aot/AotSupport.h"
#include "codegen/KernelBuilder.h"
#include "codegen/Parallel.h"

#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <mutex>

using namespace tfc;
using namespace tfc::codegen;
using namespace tfc::codegen::aot;

namespace {

/// An object file in memory, named as its archive member.
struct ObjectFile {
  std::string name;
  Halide::Buffer<uint8_t> bytes;
};

/// Compiles `module` to an object in memory: nothing is written to TMPDIR
/// (a full or read-only one cannot fail the command halfway, and a signal
/// leaves no scratch folder behind), and Halide's LLVM never opens a file
/// whose write error it would turn into an abort.
llvm::Expected<ObjectFile> compileObject(const Halide::Module &module,
                                         const std::string &name) {
  ObjectFile object{name, {}};
  // Submodules (Halide's offloaded code) are compiled into the module
  // first, as Module::compile does for object outputs.
  if (llvm::Error err = withHalideErrors([&] {
        object.bytes = module.submodules().empty()
                           ? module.compile_to_buffer()
                           : module.resolve_submodules().compile_to_buffer();
      }))
    return std::move(err);
  return object;
}

/// Halide's standalone runtime for `target` (what
/// Halide::compile_standalone_runtime compiles), in memory.
llvm::Expected<ObjectFile> compileRuntimeObject(const Halide::Target &target) {
  llvm::Expected<ObjectFile> runtime = compileObject(
      Halide::Module("standalone_runtime",
                     target.without_feature(Halide::Target::NoRuntime)
                         .without_feature(Halide::Target::JIT)),
      "halide_runtime.o");
  if (!runtime)
    return llvm::createStringError("compiling Halide's runtime for " + target.to_string() +
                     ": " + llvm::toString(runtime.takeError()));
  return runtime;
}

/// Archives `objects` into `archivePath`. Deterministic (no timestamps or
/// owners), with a symbol table so that linkers resolve members in any
/// order; built in memory and written with writeFile (atomically).
llvm::Error writeArchive(const std::string &archivePath,
                         const std::vector<ObjectFile> &objects) {
  std::vector<llvm::NewArchiveMember> members;
  for (const ObjectFile &object : objects) {
    llvm::StringRef bytes(reinterpret_cast<const char *>(object.bytes.data()),
                          object.bytes.size_in_bytes());
    members.emplace_back(llvm::MemoryBufferRef(bytes, object.name));
    members.back().Perms = 0644;
  }
  // The writer only warns about members whose symbols it cannot read, and
  // prints by default; a library must not print, and Halide's ELF objects
  // are always readable.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> archive =
      llvm::writeArchiveToBuffer(
          members, llvm::SymtabWritingMode::NormalSymtab,
          llvm::object::Archive::K_GNU, /*Deterministic=*/true,
          /*Thin=*/false,
          [](llvm::Error warning) { llvm::consumeError(std::move(warning)); });
  if (!archive)
    return llvm::createStringError("cannot write '" + archivePath +
                     "': " + llvm::toString(archive.takeError()));
  return writeFile(archivePath, (*archive)->getBuffer());
}

/// Kernel `index` of `built` as an object named `symbol`.o.
llvm::Expected<ObjectFile>
compileKernelObject(const BuiltPlan &built, size_t index,
                    const std::string &symbol, const Halide::Target &target,
                    const Halide::Target &objectTarget) {
  llvm::Expected<Kernel> kernel =
      buildKernel(built.kernelOps[index], target, symbol);
  if (!kernel)
    return kernel.takeError();
  llvm::Expected<Halide::Module> module =
      compileToModule(*kernel, objectTarget);
  if (!module)
    return module.takeError();
  return compileObject(*module, symbol + ".o");
}

} // namespace

llvm::Error aot::writeRuntimeArchive(const Halide::Target &target,
                                     const std::string &path) {
  llvm::Expected<ObjectFile> runtime = compileRuntimeObject(target);
  if (!runtime)
    return runtime.takeError();
  std::vector<ObjectFile> objects;
  objects.push_back(std::move(*runtime));
  return writeArchive(path, objects);
}

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

  const Halide::Target kernelTarget =
      options.target.with_feature(Halide::Target::NoRuntime);
  // The kernels and the runtime (one runtime for all kernels: thread pool,
  // allocator, error reporting and, for GPU targets, the device API, which
  // loads libcuda at run time) compile in parallel, each into its own slot.
  const size_t count = built.kernelOps.size();
  std::vector<ObjectFile> objects(count + 1);
  std::mutex progressMutex;
  auto compileOne = [&](size_t i) -> llvm::Error {
    if (i == count) {
      llvm::Expected<ObjectFile> runtime = compileRuntimeObject(options.target);
      if (!runtime)
        return runtime.takeError();
      objects[i] = std::move(*runtime);
      return llvm::Error::success();
    }
    const std::string &symbol = model->plan.kernels[i].name;
    if (options.progress) {
      std::lock_guard<std::mutex> lock(progressMutex);
      options.progress(i, count, symbol);
    }
    llvm::Expected<ObjectFile> object =
        compileKernelObject(built, i, symbol, options.target, kernelTarget);
    if (!object)
      return llvm::createStringError("kernel " + built.plan.kernels[i].name + ": " +
                       llvm::toString(object.takeError()));
    objects[i] = std::move(*object);
    return llvm::Error::success();
  };
  if (llvm::Error err = forEachIndex(count + 1, options.jobs, compileOne))
    return std::move(err);

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

  model->halideRuntime = true;
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
  if (model->usesDevice && options.target.has_feature(Halide::Target::OpenCL))
    result.notes.push_back(
        "the kernels run on an OpenCL device: Halide's OpenCL runtime (in " +
        archiveName + ") loads libOpenCL.so when the first kernel runs");
  else if (model->usesDevice)
    result.notes.push_back(
        "the kernels run on an NVIDIA GPU: Halide's CUDA runtime (in " +
        archiveName +
        ") loads libcuda.so when the first kernel runs; no CUDA toolkit is "
        "needed to build");
  return result;
}
