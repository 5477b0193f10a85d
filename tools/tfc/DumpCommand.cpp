//===- DumpCommand.cpp - tfc dump: print any stage of the pipeline --------===//
//
// --emit=ast prints the parsed tree, --emit=ir the elaborated tfc dialect
// (verified), --emit=ir-fused the IR after the optimization passes
// (--fusion-report adds what fused per layer). The kernel stages, which also
// run the passes, print one section per distinct kernel of the model's Plan
// (layers share kernels), headed by its name, signature and the number of
// steps that call it:
//   --emit=halide     the Halide pipeline: Funcs, schedules, loop nest
//   --emit=stmt       Halide's lowered statement (what .stmt files show)
//   --emit=stmt-html  Halide's HTML statement view, a file per kernel in -o
//   --emit=c          the C++ source Halide's C backend writes (tfc emit)
//   --emit=ptx        the PTX of the kernel's GPU loops (CUDA schedules,
//                     compute capability 8.0); -o DIR writes NAME.ptx files
//                     that ptxas assembles one by one
// --target picks the schedules (host or cuda); --kernel narrows to one.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/ModelRunner.h"

#include "session/Inspect.h"

#include "codegen/aot/AotProcessSafety.h"
#include "frontend/ASTPrinter.h"
#include "runtime/FileWriter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct DumpOptions {
  ModelOptions model;
  std::string emit = "ir";
  std::string output = "-";
  std::string target = "host";
  std::string kernel;
  bool locations = false;
  bool includePrelude = false;
  bool fusionReport = false;
};

/// What each --emit value shows: how far the session goes, and for the
/// kernel stages, which text of each kernel.
struct EmitStage {
  const char *name;
  session::Stage stage;
  std::optional<session::KernelText> kernel;
};

const EmitStage kEmitStages[] = {
    {"ast", session::Stage::Parsed, std::nullopt},
    {"ir", session::Stage::Elaborated, std::nullopt},
    {"ir-fused", session::Stage::Optimized, std::nullopt},
    {"halide", session::Stage::Planned, session::KernelText::Halide},
    {"stmt", session::Stage::Planned, session::KernelText::Stmt},
    {"stmt-html", session::Stage::Planned, session::KernelText::StmtHtml},
    {"c", session::Stage::Planned, session::KernelText::C},
    {"ptx", session::Stage::Planned, session::KernelText::Ptx},
};

/// The row of `emit` (one of kEmitStages: the option checks it).
const EmitStage &emitStage(const std::string &emit) {
  for (const EmitStage &row : kEmitStages)
    if (emit == row.name)
      return row;
  return kEmitStages[1]; // "ir", the default
}

std::vector<std::string> emitNames() {
  std::vector<std::string> names;
  for (const EmitStage &row : kEmitStages)
    names.push_back(row.name);
  return names;
}

bool isKernelStage(const std::string &emit) {
  return emitStage(emit).kernel.has_value();
}

/// A kernel's --emit=stmt-html (or --emit=ptx -o DIR) file, built in
/// memory.
struct KernelFile {
  std::string path;
  std::string signature;
  std::string text;
};

/// Writes each page atomically, once all were built: a kernel that fails
/// to compile leaves every existing file as it was.
int writePages(const std::vector<KernelFile> &pages, llvm::raw_ostream &os) {
  for (const KernelFile &page : pages) {
    rt::Status written = rt::writeFileAtomically(page.path, page.text.data(),
                                                 page.text.size());
    if (!written.ok()) {
      llvm::errs() << "error: " << written.message() << "\n";
      return 1;
    }
    os << "wrote " << page.path << "  (" << page.signature << ")\n";
  }
  return 0;
}

/// --emit=ptx -o DIR: one file per kernel in a folder (an existing one, or a
/// path ending in '/'), rather than all sections in one file.
bool ptxToFolder(const DumpOptions &options) {
  if (options.emit != "ptx" || options.output == "-")
    return false;
  return llvm::StringRef(options.output).ends_with("/") ||
         llvm::sys::fs::is_directory(options.output);
}

/// The schedules the kernel stages show (PTX exists only for CUDA's).
session::KernelTarget kernelTarget(const DumpOptions &options) {
  return options.target == "cuda" || options.emit == "ptx"
             ? session::KernelTarget::Cuda
             : session::KernelTarget::Host;
}

/// One section per kernel; stmt-html writes files instead.
int dumpKernels(const DumpOptions &options, const CompiledModel &model,
                llvm::raw_ostream &os) {
  const rt::Plan &plan = model.plan();
  session::KernelTarget target = kernelTarget(options);
  session::KernelText what = *emitStage(options.emit).kernel;

  bool html = options.emit == "stmt-html";
  bool ptxFiles = ptxToFolder(options);
  if (html || ptxFiles) {
    if (options.output == "-") {
      llvm::errs() << "error: --emit=stmt-html writes one file per kernel: "
                      "give the folder with -o DIR\n";
      return 1;
    }
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.output)) {
      llvm::errs() << "error: cannot create '" << options.output
                   << "': " << ec.message() << "\n";
      return 1;
    }
  }

  // How often each kernel runs, per entry: the first thing to know when
  // deciding which schedule matters.
  std::vector<std::map<std::string, size_t>> uses(plan.kernels.size());
  for (const rt::PlanEntry &entry : plan.entries)
    for (const rt::PlanStep &step : entry.steps)
      if (step.op == rt::PlanStep::Op::Kernel)
        for (int32_t kernel : {step.kernel, step.variant.kernel})
          if (kernel >= 0) // the variant runs instead for its size
            ++uses[static_cast<size_t>(kernel)][entry.name];

  std::vector<KernelFile> pages;
  bool found = options.kernel.empty();
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const rt::PlanKernel &info = plan.kernels[i];
    if (!options.kernel.empty() && info.name != options.kernel)
      continue;
    found = true;
    llvm::Expected<std::string> text =
        session::kernelText(model, i, what, target);
    if (!text) {
      llvm::errs() << "error: kernel " << info.name << ": "
                   << llvm::toString(text.takeError()) << "\n";
      return 1;
    }
    if (html) {
      pages.push_back({options.output + "/" + info.name + ".stmt.html",
                       info.signature, std::move(*text)});
      continue;
    }
    if (ptxFiles) {
      if (text->empty()) {
        os << "no GPU code in " << info.name << "  (" << info.signature
           << ")\n";
        continue;
      }
      llvm::SmallString<128> path(options.output);
      llvm::sys::path::append(path, info.name + ".ptx");
      pages.push_back({std::string(path), info.signature, std::move(*text)});
      continue;
    }

    os << "// ===== kernel " << info.name << ": " << info.signature << "\n"
       << "// used by";
    for (const auto &[entry, count] : uses[i])
      os << " " << count << " step" << (count == 1 ? "" : "s") << " of "
         << entry;
    if (uses[i].empty())
      os << " no step";
    os << "; target " << session::targetName(target) << "\n";
    os << *text << "\n";
  }
  if (!found) {
    llvm::errs() << "error: the model has no kernel '" << options.kernel
                 << "'; its kernels are:";
    for (const rt::PlanKernel &kernel : plan.kernels)
      llvm::errs() << " " << kernel.name;
    llvm::errs() << "\n";
    return 1;
  }
  return writePages(pages, os);
}

/// Writes `text` to stdout ("-") or atomically to `path`; prints errors.
bool writeOutput(const std::string &path, const std::string &text) {
  if (path == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    if (!llvm::outs().has_error())
      return true;
    llvm::errs() << "error: cannot write to stdout: "
                 << llvm::outs().error().message() << "\n";
    llvm::outs().clear_error();
    return false;
  }
  rt::Status written = rt::writeFileAtomically(path, text.data(), text.size());
  if (!written.ok())
    llvm::errs() << "error: " << written.message() << "\n";
  return written.ok();
}

int runDump(const DumpOptions &options) {
  codegen::installProcessSafetyHandlers();
  // ir is what the frontend produced (the passes' lit tests start from it);
  // every later stage is after the pass pipeline, as tfc run compiles it.
  session::Stage stage = emitStage(options.emit).stage;
  bool optimized = stage >= session::Stage::Optimized;
  FusionReport report;
  session::CompileOptions compile = compileOptions(options.model);
  if (options.fusionReport)
    compile.fusionReport = &report;
  // Host kernels as `tfc run` plans and compiles them.
  compile.hostKernels = kernelTarget(options) == session::KernelTarget::Host;
  std::optional<CompiledModel> model = openToStage(compile, stage);
  if (!model)
    return 1;
  if (options.fusionReport && !optimized) {
    llvm::errs() << "error: --fusion-report needs --emit=ir-fused or a "
                    "kernel stage (the passes do not run for --emit="
                 << options.emit << ")\n";
    return 1;
  }
  Session &session = *model->session;

  if (options.emit == "stmt-html" || ptxToFolder(options)) {
    if (int rc = dumpKernels(options, *model, llvm::outs()))
      return rc;
    if (options.fusionReport)
      report.print(llvm::outs());
    return 0;
  }

  // The output is assembled in memory and written only when complete: a
  // failed dump (a --kernel typo, a kernel that does not compile) leaves an
  // existing -o file as it was.
  std::string text;
  llvm::raw_string_ostream out(text);
  if (options.emit == "ast") {
    // The prelude is module 0; show it only when asked.
    for (size_t i = options.includePrelude ? 0 : 1; i < session.modules.size();
         ++i)
      printAST(*session.modules[i], out);
  } else if (isKernelStage(options.emit)) {
    if (int rc = dumpKernels(options, *model, out))
      return rc;
  } else {
    mlir::OpPrintingFlags flags;
    if (options.locations)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false)
          .useLocalScope(); // inline locations, not #loc aliases
    session.model.module->print(out, flags);
    out << "\n";
  }
  if (options.fusionReport)
    report.print(out);
  return writeOutput(options.output, out.str()) ? 0 : 1;
}

} // namespace

CommandRunner driver::registerDumpCommand(CLI::App &app) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App *command = app.add_subcommand(
      "dump", "Print a stage of the compiler: the AST, the tfc IR (before or "
              "after fusion), or per kernel the Halide pipeline, lowered "
              "statement, C source or PTX");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  command
      ->add_option("--emit", options->emit,
                   "What to print: ast (parsed model), ir (elaborated tfc "
                   "dialect, verified), ir-fused (after the optimization "
                   "passes), halide (each kernel's Funcs, "
                   "schedule and loop nest), stmt (Halide's lowered "
                   "statement), stmt-html (HTML statement files, to -o DIR), "
                   "c (Halide's C++ output), ptx (the PTX of each kernel's "
                   "GPU loops, CUDA schedules for sm_80; -o DIR writes "
                   "NAME.ptx per kernel)")
      ->check(CLI::IsMember(emitNames()))
      ->default_val("ir");
  command->add_option("-o,--output", options->output,
                      "Write to this file instead of stdout (a folder for "
                      "--emit=stmt-html; for --emit=ptx, a folder when it "
                      "exists or ends in '/')");
  command
      ->add_option("--target", options->target,
                   "Schedules of the kernel stages: host or cuda")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->default_val("host");
  command->add_option("--kernel", options->kernel,
                      "With a kernel stage, only this kernel (e.g. "
                      "k3_matmul)");
  command->add_flag("--fusion-report", options->fusionReport,
                    "After the output, list per layer what fused and, for "
                    "what did not, the op that blocked it");
  command->add_flag("--locations", options->locations,
                    "Print each op's .tfm source location");
  command->add_flag("--prelude", options->includePrelude,
                    "With --emit=ast, also print the prelude");
  return [options] { return runDump(*options); };
}
