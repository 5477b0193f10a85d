//===- AotDump.cpp - Readable Halide pipelines for tfc dump ---------------===//
//
// Printed from Halide's own data structures (Function definitions, stage
// schedules, the loop nest) rather than from what the builders meant to do,
// so the dump shows what Halide will actually compile. Compiled with
// exceptions like the rest of codegen/; Halide calls run inside
// withHalideErrors.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/AotDump.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace Halide::Internal {
// Exported by libHalide14 (Pipeline::print_loop_nest prints it to stderr)
// but not declared in Halide.h; the text is wanted on our stream.
std::string print_loop_nest(const std::vector<Function> &outputs);
} // namespace Halide::Internal

using namespace Halide;
using namespace Halide::Internal;

namespace tfc::codegen {

namespace {

std::string typeName(const Type &type) {
  std::ostringstream os;
  os << type;
  return os.str();
}

std::string bufferArgument(const std::string &name, const Type &type,
                           int dimensions) {
  return name + ": " + typeName(type) + "[" + std::to_string(dimensions) +
         "-d]";
}

/// Funcs called by `root`, callees before callers, `root` last: the order
/// in which a reader wants to meet them.
std::vector<Function> callOrder(const Function &root) {
  std::vector<Function> order;
  std::set<std::string> visited;
  std::function<void(const Function &)> visit = [&](const Function &f) {
    if (!visited.insert(f.name()).second)
      return;
    for (const auto &[name, callee] : find_direct_calls(f))
      visit(callee);
    order.push_back(f);
  };
  visit(root);
  return order;
}

std::string tailName(TailStrategy tail) {
  std::ostringstream os;
  os << tail;
  return os.str();
}

void printValues(std::ostream &os, const std::vector<Expr> &values) {
  if (values.size() == 1) {
    os << values[0];
    return;
  }
  os << "{";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "}";
}

void printDefinition(std::ostream &os, const std::string &name,
                     const Definition &def) {
  os << name << "(";
  for (size_t i = 0; i < def.args().size(); ++i)
    os << (i ? ", " : "") << def.args()[i];
  os << ") = ";
  printValues(os, def.values());
  const std::vector<ReductionVariable> &rvars = def.schedule().rvars();
  if (!rvars.empty()) {
    os << "  where ";
    for (size_t i = 0; i < rvars.size(); ++i)
      os << (i ? ", " : "") << rvars[i].var << " in [" << rvars[i].min << ", "
         << rvars[i].min << " + " << rvars[i].extent << ")";
  }
  if (def.predicate().defined() && !is_const_one(def.predicate()))
    os << "  if " << def.predicate();
  os << "\n";
}

/// An extern stage: "f(x, y) = extern name(in0, in1, 768)".
void printExternDefinition(std::ostream &os, const Function &f) {
  os << f.name() << "(";
  for (size_t i = 0; i < f.args().size(); ++i)
    os << (i ? ", " : "") << f.args()[i];
  os << ") = extern " << f.extern_function_name() << "(";
  const std::vector<ExternFuncArgument> &args = f.extern_arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    os << (i ? ", " : "");
    if (args[i].is_expr())
      os << args[i].expr;
    else if (args[i].is_func())
      os << Function(args[i].func).name();
    else if (args[i].is_image_param())
      os << args[i].image_param.name();
    else
      os << "buffer";
  }
  os << ")\n";
}

/// "split x into x.x, x.v1 by 16; loops y:parallel x.x x.v1:vectorized".
void printStageSchedule(std::ostream &os, const StageSchedule &schedule) {
  std::vector<std::string> splits;
  for (const Split &split : schedule.splits()) {
    std::ostringstream s;
    if (split.is_split())
      s << "split " << split.old_var << " into " << split.outer << ", "
        << split.inner << " by " << split.factor
        << (split.tail == TailStrategy::Auto
                ? std::string()
                : " (" + tailName(split.tail) + ")");
    else if (split.is_fuse())
      s << "fuse " << split.outer << ", " << split.inner << " into "
        << split.old_var;
    else if (split.is_rename())
      s << "rename " << split.old_var << " to " << split.outer;
    else
      s << "purify " << split.old_var << " as " << split.outer;
    splits.push_back(s.str());
  }
  if (!splits.empty()) {
    os << "    ";
    for (size_t i = 0; i < splits.size(); ++i)
      os << (i ? "; " : "") << splits[i];
    os << "\n";
  }
  // dims() lists loops innermost first and ends with Halide's synthetic
  // __outermost loop; readers expect outermost first.
  std::vector<std::string> loops;
  for (const Dim &dim : schedule.dims()) {
    if (dim.var == Var::outermost().name())
      continue;
    std::ostringstream s;
    s << dim.var;
    if (dim.for_type != ForType::Serial)
      s << ":" << dim.for_type;
    if (dim.device_api != DeviceAPI::None && dim.device_api != DeviceAPI::Host)
      s << "@" << dim.device_api;
    loops.push_back(s.str());
  }
  if (!loops.empty()) {
    os << "    loops";
    for (auto it = loops.rbegin(); it != loops.rend(); ++it)
      os << " " << *it;
    os << "\n";
  }
}

void printFunction(std::ostream &os, const Function &f, bool isOutput) {
  os << "func " << f.name() << (isOutput ? "  (output)" : "") << "\n";
  os << "  ";
  if (f.has_extern_definition())
    printExternDefinition(os, f);
  else
    printDefinition(os, f.name(), f.definition());
  for (size_t i = 0; i < f.updates().size(); ++i) {
    os << "  update " << i << ": ";
    printDefinition(os, f.name(), f.updates()[i]);
  }

  // LoopLevels can only be inspected once locked (lowering locks them too;
  // the schedule is final by now).
  LoopLevel compute = f.schedule().compute_level();
  LoopLevel store = f.schedule().store_level();
  compute.lock();
  store.lock();
  os << "  schedule: ";
  if (isOutput)
    os << "output";
  else if (compute.is_inlined())
    os << "inlined";
  else if (compute.is_root())
    os << "compute_root";
  else
    os << "compute_at " << compute.to_string();
  if (!isOutput && !compute.is_inlined() && !store.is_inlined() &&
      store.to_string() != compute.to_string())
    os << ", store_at " << (store.is_root() ? "root" : store.to_string());
  os << "\n";
  if (isOutput || !compute.is_inlined()) {
    os << "    stage 0:\n";
    printStageSchedule(os, f.definition().schedule());
    for (size_t i = 0; i < f.updates().size(); ++i) {
      os << "    update " << i << ":\n";
      printStageSchedule(os, f.updates()[i].schedule());
    }
  }
}

llvm::Error systemError(const std::string &what, int error) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 what + ": " + std::strerror(error));
}

/// Everything written to a pipe's read end `fd` until end of file.
void drainPipe(int fd, std::string &text, int &error) {
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n > 0) {
      text.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    error = n < 0 ? errno : 0;
    return;
  }
}

/// Calls `write(path)`, where `path` ("/proc/self/fd/N") names the write end
/// of a pipe, and returns what was written there. For Halide outputs that
/// Halide only writes to a named file (and without checking the writes): a
/// pipe has no size limit and no disk to fill, and a thread drains it while
/// Halide writes.
llvm::Expected<std::string>
captureNamedOutput(const std::function<llvm::Error(const std::string &)> &write) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return systemError("cannot create a pipe", errno);
  std::string text;
  int readError = 0;
  std::thread reader(drainPipe, fds[0], std::ref(text), std::ref(readError));
  llvm::Error err = write("/proc/self/fd/" + std::to_string(fds[1]));
  ::close(fds[1]); // the reader sees end of file once Halide closed its end
  reader.join();
  ::close(fds[0]);
  if (err)
    return std::move(err);
  if (readError)
    return systemError("cannot read Halide's output", readError);
  return text;
}

} // namespace

std::string retypeDeviceBuffers(const std::string &text) {
  std::set<std::string> bufferStructs; // values of _halide_buffer_init
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  const std::string init = " = _halide_buffer_init(";
  while (std::getline(in, line)) {
    size_t at = line.find(init);
    size_t star = line.find("auto *");
    if (at != std::string::npos && star != std::string::npos && star < at)
      bufferStructs.insert(line.substr(star + 6, at - star - 6));
    size_t eq = line.find("_buffer = (");
    size_t cast = line.find(" *)", eq == std::string::npos ? 0 : eq);
    if (eq != std::string::npos && cast != std::string::npos &&
        line.size() > cast + 4 && line.back() == ';') {
      std::string value = line.substr(cast + 3, line.size() - cast - 4);
      size_t nameStart = line.rfind('*', eq);
      if (bufferStructs.count(value) && nameStart != std::string::npos) {
        size_t indent = line.find_first_not_of(' ');
        line = line.substr(0, indent) + "halide_buffer_t *" +
               line.substr(nameStart + 1, eq + 7 - nameStart - 1) + " = " +
               value + ";";
      }
    }
    size_t get = line.find(" = _halide_buffer_get_device(");
    size_t autoStar = line.find("auto *");
    if (get != std::string::npos && autoStar != std::string::npos &&
        autoStar < get)
      line.replace(autoStar, 6, "auto ");
    out << line << '\n';
  }
  return out.str();
}

std::string describeArguments(const Kernel &kernel) {
  std::string text;
  for (size_t i = 0; i < kernel.arguments.size(); ++i) {
    const Argument &arg = kernel.arguments[i];
    text += (i ? ", " : "");
    if (arg.is_buffer())
      text += bufferArgument(arg.name, arg.type, arg.dimensions);
    else
      text += arg.name + ": " + typeName(arg.type);
  }
  if (kernel.output.defined())
    text += " -> " + bufferArgument(kernel.output.name(),
                                    kernel.output.output_types()[0],
                                    kernel.output.dimensions());
  return text;
}

llvm::Expected<std::string> describePipeline(const Kernel &kernel) {
  installHalideErrorHandlers();
  std::string text;
  if (llvm::Error err = withHalideErrors([&] {
        std::ostringstream os;
        os << "arguments: " << describeArguments(kernel) << "\n";
        Function output = kernel.output.function();
        for (const Function &f : callOrder(output))
          printFunction(os, f, f.name() == output.name());
        os << "loop nest:\n";
        std::istringstream nest(print_loop_nest({output}));
        for (std::string line; std::getline(nest, line);)
          os << "  " << line << "\n";
        text = os.str();
      }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   kernel.name + ": " +
                                       llvm::toString(std::move(err)));
  return text;
}

llvm::Expected<std::string> stmtHtml(const Kernel &kernel,
                                     const Halide::Target &target) {
  installHalideErrorHandlers();
  llvm::Expected<Halide::Module> module = compileToModule(kernel, target);
  if (!module)
    return module.takeError();
  llvm::Expected<std::string> html =
      captureNamedOutput([&](const std::string &path) {
        return withHalideErrors([&] { print_to_html(path, *module); });
      });
  if (!html)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   kernel.name + ": " +
                                       llvm::toString(html.takeError()));
  // Halide does not report a file it could not open; the page always ends
  // with its closing tag.
  if (llvm::StringRef(*html).rtrim().ends_with("</body>"))
    return html;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 kernel.name +
                                     ": Halide wrote an incomplete HTML page");
}

llvm::Expected<std::string> ptxSource(const Kernel &kernel,
                                      const Halide::Target &target) {
  installHalideErrorHandlers();
  if (!target.has_feature(Halide::Target::CUDA))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   kernel.name +
                                       ": PTX needs a target with CUDA");
  llvm::Expected<Halide::Module> module = compileToModule(kernel, target);
  if (!module)
    return module.takeError();
  // Lowering compiles the device code (CodeGen_PTX_Dev) into a uint8
  // buffer named "<function>_gpu_source_kernels", the PTX text followed by
  // a terminating NUL, which halide_cuda_initialize_kernels loads.
  std::string text;
  if (llvm::Error err = withHalideErrors([&] {
        for (const Halide::Buffer<void> &buffer : module->buffers()) {
          if (!llvm::StringRef(buffer.name()).ends_with("_gpu_source_kernels"))
            continue;
          const char *bytes = static_cast<const char *>(buffer.data());
          size_t size = buffer.size_in_bytes();
          while (size > 0 && bytes[size - 1] == '\0')
            --size;
          text.append(bytes, size);
          if (!text.empty() && text.back() != '\n')
            text += '\n';
        }
      }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   kernel.name + ": " +
                                       llvm::toString(std::move(err)));
  return text;
}

llvm::Expected<std::string> cSource(const Kernel &kernel,
                                    const Halide::Target &target) {
  installHalideErrorHandlers();
  llvm::Expected<Halide::Module> module = compileToModule(kernel, target);
  if (!module)
    return module.takeError();
  std::string text;
  if (llvm::Error err = withHalideErrors([&] {
        std::ostringstream os;
        {
          // As Module::compile writes a c_source output; the generator
          // writes its last lines when destroyed.
          Halide::Internal::CodeGen_C codegen(
              os, target,
              target.has_feature(Halide::Target::CPlusPlusMangling)
                  ? Halide::Internal::CodeGen_C::CPlusPlusImplementation
                  : Halide::Internal::CodeGen_C::CImplementation);
          codegen.compile(*module);
        }
        text = os.str();
      }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   kernel.name + ": " +
                                       llvm::toString(std::move(err)));
  return target.has_gpu_feature() ? retypeDeviceBuffers(text) : text;
}

} // namespace tfc::codegen
