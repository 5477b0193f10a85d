//===- JsonFile.h - Type-checked access to a tokenizer.json -----*- C++ -*-===//
//
// nlohmann-json is used without exceptions (built with -fno-exceptions, a
// throw would abort): every member is type-checked before it is read.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TOKENIZER_JSONFILE_H
#define TFC_RUNTIME_TOKENIZER_JSONFILE_H

#include "runtime/tokenizer/TokenizerImpl.h"

#include <nlohmann/json.hpp>

namespace tfc::rt::tok {

using json = nlohmann::json;

/// Typed access to the members of one file's JSON, with errors that name the
/// file and the dotted path of the field.
class JsonFile {
public:
  explicit JsonFile(std::string name) : name(std::move(name)) {}

  Status error(const std::string &field, const std::string &what) const {
    return Status::error(name + ": field '" + field + "': " + what);
  }
  Status wrongType(const std::string &field, const char *expected,
                   const json &value) const {
    return error(field, std::string("expected ") + expected + ", found " +
                            value.type_name());
  }

  /// The member `key` of `object`, or nullptr when it is absent or null.
  static const json *member(const json &object, const char *key) {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  /// These leave `out` unchanged when the member is absent or null.
  Status getBool(const json &object, const char *key, const std::string &path,
                 bool &out) const {
    const json *value = member(object, key);
    if (value && !value->is_boolean())
      return wrongType(path, "a boolean", *value);
    if (value)
      out = value->get<bool>();
    return Status::success();
  }
  Status getString(const json &object, const char *key, const std::string &path,
                   std::string &out) const {
    const json *value = member(object, key);
    if (value && !value->is_string())
      return wrongType(path, "a string", *value);
    if (value)
      out = value->get<std::string>();
    return Status::success();
  }
  Status getCount(const json &object, const char *key, const std::string &path,
                  size_t &out) const {
    const json *value = member(object, key);
    if (value && !(value->is_number_integer() && value->get<int64_t>() >= 0))
      return error(path,
                   std::string("expected a non-negative integer, found ") +
                       brief(*value));
    if (value)
      out = static_cast<size_t>(value->get<int64_t>());
    return Status::success();
  }
  /// A required object member.
  Expected<const json *> getObject(const json &object, const char *key,
                                   const std::string &path) const {
    const json *value = member(object, key);
    if (!value)
      return error(path, "missing");
    if (!value->is_object())
      return wrongType(path, "an object", *value);
    return value;
  }
  /// The "type" of a component object.
  Expected<std::string> typeOf(const json &component,
                               const std::string &path) const {
    if (!component.is_object())
      return wrongType(path, "an object or null", component);
    std::string type;
    TFC_RT_RETURN_IF_ERROR(getString(component, "type", path + ".type", type));
    if (type.empty())
      return error(path + ".type", "missing");
    return type;
  }
  /// `value` as JSON, shortened for an error message.
  static std::string brief(const json &value) {
    std::string text = value.dump();
    return text.size() <= 60 ? text : text.substr(0, 57) + "...";
  }
  Status unsupported(const std::string &field, const std::string &what,
                     const std::string &value) const {
    return error(field, "unsupported " + what + " '" + value + "'");
  }

  std::string name;
};

/// TokenizerJsonPost.cpp: post_processor, decoder, truncation and padding.
Status parsePostProcessing(const JsonFile &file, const json &root,
                           TokenizerImpl &impl);

} // namespace tfc::rt::tok

#endif // TFC_RUNTIME_TOKENIZER_JSONFILE_H
