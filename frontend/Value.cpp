//===- Value.cpp - Values the elaborator computes with --------------------===//

#include "frontend/Value.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tfc {

std::string SymDim::str() const {
  std::string out;
  for (const auto &[name, coeff] : terms) {
    if (coeff == 0)
      continue;
    if (!out.empty())
      out += coeff < 0 ? " - " : " + ";
    else if (coeff < 0)
      out += "-";
    // Unsigned: the magnitude of INT64_MIN is not an int64_t.
    uint64_t magnitude = coeff < 0 ? 0 - static_cast<uint64_t>(coeff)
                                   : static_cast<uint64_t>(coeff);
    if (magnitude != 1)
      out += std::to_string(magnitude) + "*";
    out += name;
  }
  if (out.empty())
    return std::to_string(constant);
  if (constant > 0)
    out += " + " + std::to_string(constant);
  else if (constant < 0)
    out += " - " + std::to_string(0 - static_cast<uint64_t>(constant));
  return out;
}

/// Appends `list` as "[a, b, ...]" to `out`. Lists share their elements, so a
/// short program can build one whose text would not fit in memory: past
/// kMaxListText characters the rest is "...". Every element visited adds at
/// least one character, so the work is bounded too.
static constexpr size_t kMaxListText = 256;
static void appendList(const Value &list, std::string &out) {
  out += "[";
  const std::vector<Value> &elements = list.getList();
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i)
      out += ", ";
    if (out.size() >= kMaxListText) {
      out += "...";
      break;
    }
    if (elements[i].is(Value::Kind::List))
      appendList(elements[i], out);
    else
      out += elements[i].str();
  }
  out += "]";
}

std::string shapeToString(const std::string &dtype, const SymShape &shape) {
  std::string out = dtype + "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += shape[i].str();
  }
  return out + "]";
}

Value Value::ofInt(int64_t v) {
  Value out;
  out.kind = Kind::Int;
  out.intValue = v;
  return out;
}

Value Value::ofFloat(double v) {
  Value out;
  out.kind = Kind::Float;
  out.floatValue = v;
  return out;
}

Value Value::ofBool(bool v) {
  Value out;
  out.kind = Kind::Bool;
  out.boolValue = v;
  return out;
}

Value Value::ofStr(std::string v) {
  Value out;
  out.kind = Kind::Str;
  out.strValue = std::move(v);
  return out;
}

Value Value::ofEnum(std::string v) {
  Value out;
  out.kind = Kind::Enum;
  out.strValue = std::move(v);
  return out;
}

Value Value::ofList(std::vector<Value> v) {
  Value out;
  out.kind = Kind::List;
  for (const Value &element : v)
    out.listDepth = std::max(out.listDepth, element.listDepth);
  ++out.listDepth;
  out.listValue = std::make_shared<std::vector<Value>>(std::move(v));
  return out;
}

Value Value::ofDim(SymDim d, std::optional<DimSource> source) {
  // A dim with no symbols is just an int: keep one representation for it.
  if (d.isStatic())
    return ofInt(d.constant);
  Value out;
  out.kind = Kind::Dim;
  out.dimValue = std::move(d);
  out.dimSource = source;
  return out;
}

Value Value::ofTensor(TensorValue t) {
  Value out;
  out.kind = Kind::Tensor;
  out.tensorValue = std::make_shared<TensorValue>(std::move(t));
  return out;
}

bool Value::isIntLike() const {
  return kind == Kind::Int || (kind == Kind::Dim && dimValue.isStatic());
}

double Value::asDouble() const {
  if (kind == Kind::Int)
    return static_cast<double>(intValue);
  return floatValue;
}

std::optional<SymDim> Value::asDim() const {
  if (kind == Kind::Int)
    return SymDim::of(intValue);
  if (kind == Kind::Dim)
    return dimValue;
  return std::nullopt;
}

const char *Value::kindName(Kind k) {
  switch (k) {
  case Kind::None:
    return "nothing";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Bool:
    return "bool";
  case Kind::Str:
    return "str";
  case Kind::Enum:
    return "enum";
  case Kind::List:
    return "list";
  case Kind::Dim:
    return "dim";
  case Kind::Tensor:
    return "tensor";
  }
  return "?";
}

std::string Value::describe() const {
  if (kind == Kind::Tensor)
    return "tensor " + shapeToString(tensorValue->dtype, tensorValue->shape);
  if (kind == Kind::Dim)
    return "dim " + dimValue.str();
  return kindName(kind);
}

std::string Value::str() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::Int:
    return std::to_string(intValue);
  case Kind::Float: {
    std::ostringstream os;
    os.precision(9);
    os << floatValue;
    return os.str();
  }
  case Kind::Bool:
    return boolValue ? "true" : "false";
  case Kind::Str:
  case Kind::Enum:
    return strValue;
  case Kind::List: {
    std::string out;
    appendList(*this, out);
    return out;
  }
  case Kind::Dim:
    return dimValue.str();
  case Kind::Tensor:
    return describe();
  }
  return "?";
}

} // namespace tfc
