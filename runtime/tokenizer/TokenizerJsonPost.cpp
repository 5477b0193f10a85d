//===- TokenizerJsonPost.cpp - Post-processor, decoder, padding -----------===//
//
// The parts of tokenizer.json that act after the model (see JsonFile.h for
// the reading rules).
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/JsonFile.h"

namespace tfc::rt::tok {

namespace {

/// Padding beyond a million tokens is a corrupt file, not a request to
/// allocate gigabytes.
constexpr size_t kMaxPadding = size_t(1) << 20;

Status parseTemplateSpecial(const JsonFile &file, const json &specials,
                            const std::string &name, TemplatePiece &piece) {
  std::string path = "post_processor.special_tokens." + name;
  Expected<const json *> entry = file.getObject(specials, name.c_str(), path);
  if (!entry)
    return entry.status();
  const json *ids = JsonFile::member(**entry, "ids");
  const json *tokens = JsonFile::member(**entry, "tokens");
  if (!ids || !ids->is_array() || !tokens || !tokens->is_array() ||
      ids->size() != tokens->size())
    return file.error(path, "expected 'ids' and 'tokens' arrays of one length");
  for (size_t i = 0; i < ids->size(); ++i) {
    const json &id = (*ids)[i];
    const json &token = (*tokens)[i];
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > INT32_MAX || !token.is_string())
      return file.error(path, "expected integer ids and string tokens");
    piece.ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    piece.tokens.push_back(token.get<std::string>());
  }
  return Status::success();
}

Status parseTemplate(const JsonFile &file, const json &spec,
                     PostProcessor &post) {
  const json *single = JsonFile::member(spec, "single");
  if (!single || !single->is_array())
    return file.error("post_processor.single", "expected an array");
  Expected<const json *> specials =
      file.getObject(spec, "special_tokens", "post_processor.special_tokens");
  if (!specials)
    return specials.status();
  for (size_t i = 0; i < single->size(); ++i) {
    std::string path = "post_processor.single[" + std::to_string(i) + "]";
    const json &item = (*single)[i];
    const json *sequence =
        item.is_object() ? JsonFile::member(item, "Sequence") : nullptr;
    const json *special =
        item.is_object() ? JsonFile::member(item, "SpecialToken") : nullptr;
    TemplatePiece piece;
    std::string id;
    if (sequence && sequence->is_object()) {
      TFC_RT_RETURN_IF_ERROR(file.getString(*sequence, "id", path, id));
      if (id != "A")
        return file.error(path, "unsupported sequence '" + id + "'");
      piece.sequence = true;
    } else if (special && special->is_object()) {
      TFC_RT_RETURN_IF_ERROR(file.getString(*special, "id", path, id));
      TFC_RT_RETURN_IF_ERROR(parseTemplateSpecial(file, **specials, id, piece));
    } else {
      return file.error(path, "expected {\"Sequence\": ...} or "
                              "{\"SpecialToken\": ...}");
    }
    post.single.push_back(std::move(piece));
  }
  post.present = true;
  return Status::success();
}

/// BertProcessing's "cls" / "sep": ["[CLS]", 101].
Status parseBertPair(const JsonFile &file, const json &spec, const char *key,
                     TemplatePiece &piece) {
  const json *pair = JsonFile::member(spec, key);
  std::string path = std::string("post_processor.") + key;
  if (!pair || !pair->is_array() || pair->size() != 2 ||
      !(*pair)[0].is_string() || !(*pair)[1].is_number_integer() ||
      (*pair)[1].get<int64_t>() < 0 || (*pair)[1].get<int64_t>() > INT32_MAX)
    return file.error(path, "expected [\"token\", id]");
  piece.tokens.push_back((*pair)[0].get<std::string>());
  piece.ids.push_back(static_cast<int32_t>((*pair)[1].get<int64_t>()));
  return Status::success();
}

Status parsePostProcessor(const JsonFile &file, const json &root,
                          PostProcessor &post) {
  const json *spec = JsonFile::member(root, "post_processor");
  if (!spec)
    return Status::success();
  Expected<std::string> type = file.typeOf(*spec, "post_processor");
  if (!type)
    return type.status();
  if (*type == "ByteLevel") // only trims offsets, which we do not report
    return Status::success();
  if (*type == "TemplateProcessing")
    return parseTemplate(file, *spec, post);
  if (*type != "BertProcessing")
    return file.unsupported("post_processor.type", "post-processor", *type);
  TemplatePiece cls, sequence, sep;
  sequence.sequence = true;
  TFC_RT_RETURN_IF_ERROR(parseBertPair(file, *spec, "cls", cls));
  TFC_RT_RETURN_IF_ERROR(parseBertPair(file, *spec, "sep", sep));
  post.single = {cls, sequence, sep};
  post.present = true;
  return Status::success();
}

Status parseDecoder(const JsonFile &file, const json &root, Decoder &decoder) {
  const json *spec = JsonFile::member(root, "decoder");
  if (!spec)
    return Status::success();
  Expected<std::string> type = file.typeOf(*spec, "decoder");
  if (!type)
    return type.status();
  if (*type == "ByteLevel") {
    decoder.kind = DecoderKind::ByteLevel;
    return Status::success();
  }
  if (*type != "WordPiece")
    return file.unsupported("decoder.type", "decoder", *type);
  decoder.kind = DecoderKind::WordPiece;
  TFC_RT_RETURN_IF_ERROR(
      file.getString(*spec, "prefix", "decoder.prefix", decoder.prefix));
  return file.getBool(*spec, "cleanup", "decoder.cleanup", decoder.cleanup);
}

Status parseDirection(const JsonFile &file, const json &spec,
                      const std::string &section, bool &left) {
  std::string direction = "Right";
  TFC_RT_RETURN_IF_ERROR(
      file.getString(spec, "direction", section + ".direction", direction));
  if (direction != "Right" && direction != "Left")
    return file.unsupported(section + ".direction", "direction", direction);
  left = direction == "Left";
  return Status::success();
}

Status parseTruncation(const JsonFile &file, const json &root,
                       Truncation &truncation) {
  const json *spec = JsonFile::member(root, "truncation");
  if (!spec)
    return Status::success();
  if (!spec->is_object())
    return file.wrongType("truncation", "an object or null", *spec);
  truncation.present = true;
  if (!JsonFile::member(*spec, "max_length"))
    return file.error("truncation.max_length", "missing");
  TFC_RT_RETURN_IF_ERROR(file.getCount(
      *spec, "max_length", "truncation.max_length", truncation.maxLength));
  std::string strategy = "LongestFirst";
  TFC_RT_RETURN_IF_ERROR(
      file.getString(*spec, "strategy", "truncation.strategy", strategy));
  // With one sequence LongestFirst and OnlyFirst cut the same tokens. The
  // stride only shapes the overflowing windows, which are not returned.
  if (strategy != "LongestFirst" && strategy != "OnlyFirst")
    return file.unsupported("truncation.strategy", "strategy", strategy);
  return parseDirection(file, *spec, "truncation", truncation.left);
}

Status parsePadding(const JsonFile &file, const json &root, Padding &padding) {
  const json *spec = JsonFile::member(root, "padding");
  if (!spec)
    return Status::success();
  if (!spec->is_object())
    return file.wrongType("padding", "an object or null", *spec);
  padding.present = true;
  const json *strategy = JsonFile::member(*spec, "strategy");
  if (strategy && strategy->is_object() && strategy->contains("Fixed")) {
    size_t fixed = 0;
    TFC_RT_RETURN_IF_ERROR(
        file.getCount(*strategy, "Fixed", "padding.strategy.Fixed", fixed));
    if (fixed > kMaxPadding)
      return file.error("padding.strategy.Fixed",
                        std::to_string(fixed) + " is more than " +
                            std::to_string(kMaxPadding));
    padding.fixed = fixed;
  } else if (!(strategy && strategy->is_string() &&
               strategy->get<std::string>() == "BatchLongest")) {
    return file.error(
        "padding.strategy",
        "expected \"BatchLongest\" or {\"Fixed\": n}, found " +
            (strategy ? JsonFile::brief(*strategy) : std::string("null")));
  }
  TFC_RT_RETURN_IF_ERROR(file.getCount(*spec, "pad_to_multiple_of",
                                       "padding.pad_to_multiple_of",
                                       padding.multipleOf));
  if (padding.multipleOf > kMaxPadding)
    return file.error("padding.pad_to_multiple_of",
                      std::to_string(padding.multipleOf) + " is more than " +
                          std::to_string(kMaxPadding));
  size_t padId = 0;
  TFC_RT_RETURN_IF_ERROR(
      file.getCount(*spec, "pad_id", "padding.pad_id", padId));
  if (padId > INT32_MAX)
    return file.error("padding.pad_id", "out of range");
  padding.padId = static_cast<int32_t>(padId);
  padding.padToken = "[PAD]";
  TFC_RT_RETURN_IF_ERROR(file.getString(*spec, "pad_token", "padding.pad_token",
                                        padding.padToken));
  return parseDirection(file, *spec, "padding", padding.left);
}

} // namespace

Status parsePostProcessing(const JsonFile &file, const json &root,
                           TokenizerImpl &impl) {
  TFC_RT_RETURN_IF_ERROR(parsePostProcessor(file, root, impl.postProcessor));
  TFC_RT_RETURN_IF_ERROR(parseDecoder(file, root, impl.decoder));
  TFC_RT_RETURN_IF_ERROR(parseTruncation(file, root, impl.truncation));
  return parsePadding(file, root, impl.padding);
}

} // namespace tfc::rt::tok
