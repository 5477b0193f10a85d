//===- ASTPrinter.cpp - Readable dump of a parsed .tfm file ---------------===//

#include "frontend/ASTPrinter.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tfc {

using namespace ast;

namespace {

/// The shortest spelling that reads back as the same double, with a `.0`
/// when it would otherwise look like an integer.
std::string formatDouble(double value) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  std::string text = buf;
  if (text.find_first_of(".eEin") == std::string::npos)
    text += ".0";
  return text;
}

void printEscaped(llvm::StringRef text, llvm::raw_ostream &os) {
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      os << "\\\"";
      break;
    case '\\':
      os << "\\\\";
      break;
    case '\n':
      os << "\\n";
      break;
    case '\t':
      os << "\\t";
      break;
    case '{':
      os << "\\{";
      break;
    case '}':
      os << "\\}";
      break;
    default:
      if (c < 0x20 || c == 0x7F) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02X", c);
        os << buf;
      } else {
        os << static_cast<char>(c);
      }
    }
  }
}

void printOptional(const Expr *expr, llvm::raw_ostream &os) {
  if (expr)
    printExpr(*expr, os);
}

class Printer {
public:
  explicit Printer(llvm::raw_ostream &os) : os(os) {}

  void printModule(const Module &module);

private:
  llvm::raw_ostream &indent() { return os.indent(2 * level); }
  void printLoc(SourceLoc loc) {
    os << " @" << loc.line << ":" << loc.col << "\n";
  }
  void printTensorType(const TensorTypeExpr &type);
  void printParamDecl(const char *label, const ParamDecl &param);
  void printBody(const Body &body);
  void printStmt(const Stmt &stmt);

  llvm::raw_ostream &os;
  unsigned level = 0;

  struct Nest {
    explicit Nest(Printer &p) : p(p) { ++p.level; }
    ~Nest() { --p.level; }
    Printer &p;
  };
};

void Printer::printTensorType(const TensorTypeExpr &type) {
  os << type.dtype << "[";
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i)
      os << ", ";
    printOptional(type.dims[i].get(), os);
  }
  os << "]";
}

void Printer::printParamDecl(const char *label, const ParamDecl &param) {
  indent() << label << " " << param.name;
  if (param.tensorType) {
    os << ": ";
    printTensorType(*param.tensorType);
  } else if (!param.kind.empty()) {
    os << ": " << param.kind;
  }
  if (param.defaultValue) {
    os << " = ";
    printExpr(*param.defaultValue, os);
  }
  printLoc(param.loc);
}

void Printer::printBody(const Body &body) {
  Nest nest(*this);
  for (const StmtPtr &stmt : body)
    if (stmt)
      printStmt(*stmt);
}

void Printer::printStmt(const Stmt &stmt) {
  if (const auto *assign = llvm::dyn_cast<AssignStmt>(&stmt)) {
    indent() << "Assign ";
    for (size_t i = 0; i < assign->targets.size(); ++i)
      os << (i ? ", " : "") << assign->targets[i].name;
    os << " = ";
    printOptional(assign->value.get(), os);
    printLoc(stmt.getLoc());
  } else if (const auto *param = llvm::dyn_cast<ParamStmt>(&stmt)) {
    indent() << "Param " << param->name << ": ";
    printTensorType(param->type);
    os << " = ";
    printOptional(param->checkpointName.get(), os);
    printLoc(stmt.getLoc());
  } else if (const auto *loop = llvm::dyn_cast<ForStmt>(&stmt)) {
    indent() << "For " << loop->var << " in ";
    printOptional(loop->lo.get(), os);
    os << " .. ";
    printOptional(loop->hi.get(), os);
    printLoc(stmt.getLoc());
    printBody(loop->body);
  } else if (const auto *cond = llvm::dyn_cast<IfStmt>(&stmt)) {
    indent() << "If ";
    printOptional(cond->cond.get(), os);
    printLoc(stmt.getLoc());
    Nest nest(*this);
    indent() << "Then\n";
    printBody(cond->thenBody);
    if (!cond->elseBody.empty()) {
      indent() << "Else\n";
      printBody(cond->elseBody);
    }
  } else if (const auto *ret = llvm::dyn_cast<ReturnStmt>(&stmt)) {
    indent() << "Return";
    for (size_t i = 0; i < ret->values.size(); ++i) {
      os << (i ? ", " : " ");
      if (!ret->values[i].name.empty())
        os << ret->values[i].name << ": ";
      printOptional(ret->values[i].value.get(), os);
    }
    printLoc(stmt.getLoc());
  } else if (const auto *check = llvm::dyn_cast<AssertStmt>(&stmt)) {
    indent() << "Assert ";
    printOptional(check->cond.get(), os);
    if (check->message) {
      os << ", ";
      printExpr(*check->message, os);
    }
    printLoc(stmt.getLoc());
  }
}

void Printer::printModule(const Module &module) {
  // Only the file's name: the dump should not depend on where the file is.
  llvm::StringRef file = module.fileName;
  size_t slash = file.find_last_of('/');
  if (slash != llvm::StringRef::npos)
    file = file.substr(slash + 1);
  os << "Module ";
  if (module.modelName)
    os << "'" << *module.modelName << "'";
  else
    os << "<unnamed>";
  os << " (" << file << ")\n";

  Nest nest(*this);
  for (const ImportDecl &import : module.imports) {
    indent() << "Import \"";
    printEscaped(import.path, os);
    os << "\"";
    printLoc(import.loc);
  }
  for (const ConfigEntry &entry : module.config) {
    indent() << "Config " << entry.name << " = ";
    printOptional(entry.value.get(), os);
    printLoc(entry.loc);
  }
  for (const DimDecl &dim : module.dims) {
    indent() << "Dim " << dim.name;
    if (dim.bound) {
      os << " <= ";
      printExpr(*dim.bound, os);
    }
    printLoc(dim.loc);
  }
  for (const BlockDecl &block : module.blocks) {
    indent() << "Block " << block.name;
    printLoc(block.loc);
    {
      Nest inner(*this);
      for (const ParamDecl &param : block.params)
        printParamDecl("Arg", param);
    }
    printBody(block.body);
  }
  for (const EntryDecl &entry : module.entries) {
    indent() << "Entry " << entry.name;
    printLoc(entry.loc);
    {
      Nest inner(*this);
      for (const ParamDecl &input : entry.inputs)
        printParamDecl("Input", input);
    }
    printBody(entry.body);
  }
}

} // namespace

void printExpr(const Expr &expr, llvm::raw_ostream &os) {
  switch (expr.getKind()) {
  case Expr::Kind::Int:
    os << "Int " << llvm::cast<IntExpr>(expr).value;
    return;
  case Expr::Kind::Float:
    os << "Float " << formatDouble(llvm::cast<FloatExpr>(expr).value);
    return;
  case Expr::Kind::Bool:
    os << "Bool " << (llvm::cast<BoolExpr>(expr).value ? "true" : "false");
    return;
  case Expr::Kind::String: {
    os << "String \"";
    for (const StringExpr::Piece &piece : llvm::cast<StringExpr>(expr).pieces) {
      if (piece.hole) {
        os << "{";
        printExpr(*piece.hole, os);
        os << "}";
      } else {
        printEscaped(piece.text, os);
      }
    }
    os << "\"";
    return;
  }
  case Expr::Kind::Ident:
    os << "Ident " << llvm::cast<IdentExpr>(expr).name;
    return;
  case Expr::Kind::List: {
    os << "List [";
    const auto &list = llvm::cast<ListExpr>(expr);
    for (size_t i = 0; i < list.elements.size(); ++i) {
      if (i)
        os << ", ";
      printOptional(list.elements[i].get(), os);
    }
    os << "]";
    return;
  }
  case Expr::Kind::Unary: {
    const auto &unary = llvm::cast<UnaryExpr>(expr);
    os << "Unary " << spelling(unary.op) << " (";
    printOptional(unary.operand.get(), os);
    os << ")";
    return;
  }
  case Expr::Kind::Binary: {
    const auto &binary = llvm::cast<BinaryExpr>(expr);
    os << "Binary " << spelling(binary.op) << " (";
    printOptional(binary.lhs.get(), os);
    os << ", ";
    printOptional(binary.rhs.get(), os);
    os << ")";
    return;
  }
  case Expr::Kind::Call: {
    const auto &call = llvm::cast<CallExpr>(expr);
    os << "Call " << call.callee << "(";
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (i)
        os << ", ";
      if (!call.args[i].name.empty())
        os << call.args[i].name << "=";
      printOptional(call.args[i].value.get(), os);
    }
    os << ")";
    return;
  }
  case Expr::Kind::Index: {
    const auto &index = llvm::cast<IndexExpr>(expr);
    os << "Index (";
    printOptional(index.base.get(), os);
    os << ")[";
    for (size_t i = 0; i < index.subscripts.size(); ++i) {
      const Subscript &sub = index.subscripts[i];
      if (i)
        os << ", ";
      if (sub.isEllipsis) {
        os << "...";
        continue;
      }
      if (!sub.isSlice) {
        printOptional(sub.index.get(), os);
        continue;
      }
      printOptional(sub.start.get(), os);
      os << ":";
      printOptional(sub.end.get(), os);
      if (sub.step) {
        os << ":";
        printOptional(sub.step.get(), os);
      }
    }
    os << "]";
    return;
  }
  }
}

void printAST(const Module &module, llvm::raw_ostream &os) {
  Printer(os).printModule(module);
}

} // namespace tfc
