//===- TokenizerJson.cpp - Reading a Hugging Face tokenizer.json ----------===//
//
// nlohmann-json is used without exceptions: parse() with
// allow_exceptions=false, and every member is type-checked before it is read.
// Every error names the file and the field; a component or option that this
// runtime does not implement is an error too, never silently ignored.
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/JsonFile.h"

namespace tfc::rt::tok {

namespace {

Status parseAddedToken(const JsonFile &file, const json &entry,
                       const std::string &path, AddedToken &token) {
  if (!entry.is_object())
    return file.wrongType(path, "an object", entry);
  const json *id = JsonFile::member(entry, "id");
  if (!id || !id->is_number_integer() || id->get<int64_t>() < 0 ||
      id->get<int64_t>() > INT32_MAX)
    return file.error(path + ".id", "expected a non-negative integer id");
  token.id = static_cast<int32_t>(id->get<int64_t>());
  TFC_RT_RETURN_IF_ERROR(
      file.getString(entry, "content", path + ".content", token.content));
  if (token.content.empty())
    return file.error(path + ".content", "missing or empty");
  bool singleWord = false;
  TFC_RT_RETURN_IF_ERROR(
      file.getBool(entry, "single_word", path + ".single_word", singleWord));
  if (singleWord)
    return file.error(path + ".single_word", "unsupported value true");
  TFC_RT_RETURN_IF_ERROR(
      file.getBool(entry, "special", path + ".special", token.special));
  TFC_RT_RETURN_IF_ERROR(
      file.getBool(entry, "lstrip", path + ".lstrip", token.lstrip));
  TFC_RT_RETURN_IF_ERROR(
      file.getBool(entry, "rstrip", path + ".rstrip", token.rstrip));
  token.normalized = !token.special; // HF's default
  return file.getBool(entry, "normalized", path + ".normalized",
                      token.normalized);
}

Status parseAddedTokens(const JsonFile &file, const json &root,
                        TokenizerImpl &impl) {
  const json *list = JsonFile::member(root, "added_tokens");
  if (!list)
    return Status::success();
  if (!list->is_array())
    return file.wrongType("added_tokens", "an array", *list);
  for (size_t i = 0; i < list->size(); ++i) {
    AddedToken token;
    TFC_RT_RETURN_IF_ERROR(parseAddedToken(
        file, (*list)[i], "added_tokens[" + std::to_string(i) + "]", token));
    impl.added.push_back(std::move(token));
  }
  return Status::success();
}

Status parseNormalizer(const JsonFile &file, const json &root,
                       Normalizer &normalizer) {
  const json *spec = JsonFile::member(root, "normalizer");
  if (!spec)
    return Status::success();
  Expected<std::string> type = file.typeOf(*spec, "normalizer");
  if (!type)
    return type.status();
  if (*type != "BertNormalizer")
    return file.unsupported("normalizer.type", "normalizer", *type);
  normalizer.present = true;
  TFC_RT_RETURN_IF_ERROR(file.getBool(
      *spec, "clean_text", "normalizer.clean_text", normalizer.cleanText));
  TFC_RT_RETURN_IF_ERROR(file.getBool(*spec, "handle_chinese_chars",
                                      "normalizer.handle_chinese_chars",
                                      normalizer.handleChineseChars));
  TFC_RT_RETURN_IF_ERROR(file.getBool(
      *spec, "lowercase", "normalizer.lowercase", normalizer.lowercase));
  // strip_accents: null means "as lowercase".
  normalizer.stripAccents = normalizer.lowercase;
  return file.getBool(*spec, "strip_accents", "normalizer.strip_accents",
                      normalizer.stripAccents);
}

Status parsePreTokenizer(const JsonFile &file, const json &root,
                         PreTokenizer &pre) {
  const json *spec = JsonFile::member(root, "pre_tokenizer");
  if (!spec)
    return Status::success();
  Expected<std::string> type = file.typeOf(*spec, "pre_tokenizer");
  if (!type)
    return type.status();
  if (*type == "BertPreTokenizer") {
    pre.kind = PreTokenizerKind::Bert;
    return Status::success();
  }
  if (*type != "ByteLevel")
    return file.unsupported("pre_tokenizer.type", "pre-tokenizer", *type);
  pre.kind = PreTokenizerKind::ByteLevel;
  TFC_RT_RETURN_IF_ERROR(file.getBool(*spec, "add_prefix_space",
                                      "pre_tokenizer.add_prefix_space",
                                      pre.addPrefixSpace));
  return file.getBool(*spec, "use_regex", "pre_tokenizer.use_regex",
                      pre.useRegex);
}

Status parseVocab(const JsonFile &file, const json &model, Vocab &vocab) {
  Expected<const json *> entries =
      file.getObject(model, "vocab", "model.vocab");
  if (!entries)
    return entries.status();
  for (auto it = (*entries)->begin(); it != (*entries)->end(); ++it) {
    if (!it.value().is_number_integer())
      return file.error("model.vocab", "token '" + it.key() +
                                           "': expected an integer id, found " +
                                           it.value().type_name());
    Status added = vocab.add(it.key(), it.value().get<int64_t>());
    if (!added.ok())
      return file.error("model.vocab", added.message());
  }
  if (vocab.ids.empty())
    return file.error("model.vocab", "empty");
  return Status::success();
}

/// One entry of model.merges: "a b" (before tokenizers 0.20) or ["a", "b"].
Status parseMerge(const JsonFile &file, const json &entry,
                  const std::string &path, std::string &left,
                  std::string &right) {
  if (entry.is_string()) {
    const std::string &text = entry.get_ref<const std::string &>();
    size_t space = text.find(' ');
    if (space == std::string::npos || text.find(' ', space + 1) != text.npos)
      return file.error(path, "expected two tokens separated by one space, "
                              "found '" +
                                  text + "'");
    left = text.substr(0, space);
    right = text.substr(space + 1);
    return Status::success();
  }
  if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() ||
      !entry[1].is_string())
    return file.error(path, "expected \"a b\" or [\"a\", \"b\"], found " +
                                JsonFile::brief(entry));
  left = entry[0].get<std::string>();
  right = entry[1].get<std::string>();
  return Status::success();
}

Status parseBpe(const JsonFile &file, const json &spec, Model &model) {
  BpeModel &bpe = model.bpe;
  const json *dropout = JsonFile::member(spec, "dropout");
  if (dropout && !(dropout->is_number() && dropout->get<double>() == 0.0))
    return file.error("model.dropout", "unsupported value " +
                                           JsonFile::brief(*dropout) +
                                           " (only null or 0)");
  bool byteFallback = false;
  TFC_RT_RETURN_IF_ERROR(
      file.getBool(spec, "byte_fallback", "model.byte_fallback", byteFallback));
  if (byteFallback)
    return file.error("model.byte_fallback", "unsupported value true");
  TFC_RT_RETURN_IF_ERROR(file.getString(spec, "continuing_subword_prefix",
                                        "model.continuing_subword_prefix",
                                        bpe.continuingPrefix));
  TFC_RT_RETURN_IF_ERROR(file.getString(spec, "end_of_word_suffix",
                                        "model.end_of_word_suffix",
                                        bpe.endOfWordSuffix));
  TFC_RT_RETURN_IF_ERROR(
      file.getBool(spec, "fuse_unk", "model.fuse_unk", bpe.fuseUnk));
  TFC_RT_RETURN_IF_ERROR(file.getBool(spec, "ignore_merges",
                                      "model.ignore_merges", bpe.ignoreMerges));
  std::string unk;
  TFC_RT_RETURN_IF_ERROR(
      file.getString(spec, "unk_token", "model.unk_token", unk));
  if (!unk.empty()) {
    bpe.unk = model.vocab.find(unk);
    if (!bpe.unk)
      return file.error("model.unk_token",
                        "'" + unk + "' is not in model.vocab");
  }
  const json *merges = JsonFile::member(spec, "merges");
  if (!merges || !merges->is_array())
    return file.error("model.merges",
                      merges ? std::string("expected an array, found ") +
                                   merges->type_name()
                             : "missing");
  for (size_t i = 0; i < merges->size(); ++i) {
    std::string path = "model.merges[" + std::to_string(i) + "]";
    std::string left, right;
    TFC_RT_RETURN_IF_ERROR(parseMerge(file, (*merges)[i], path, left, right));
    Status added = addMerge(model, left, right, static_cast<int32_t>(i));
    if (!added.ok())
      return file.error(path, added.message());
  }
  return Status::success();
}

Status parseWordPiece(const JsonFile &file, const json &spec, Model &model) {
  WordPieceModel &wp = model.wordPiece;
  TFC_RT_RETURN_IF_ERROR(file.getString(spec, "continuing_subword_prefix",
                                        "model.continuing_subword_prefix",
                                        wp.prefix));
  TFC_RT_RETURN_IF_ERROR(file.getCount(spec, "max_input_chars_per_word",
                                       "model.max_input_chars_per_word",
                                       wp.maxInputChars));
  std::string unk = "[UNK]";
  TFC_RT_RETURN_IF_ERROR(
      file.getString(spec, "unk_token", "model.unk_token", unk));
  std::optional<int32_t> unkId = model.vocab.find(unk);
  if (!unkId)
    return file.error("model.unk_token", "'" + unk + "' is not in model.vocab");
  wp.unk = *unkId;
  return Status::success();
}

Status parseModel(const JsonFile &file, const json &root, Model &model) {
  Expected<const json *> spec = file.getObject(root, "model", "model");
  if (!spec)
    return spec.status();
  Expected<std::string> type = file.typeOf(**spec, "model");
  if (!type)
    return type.status();
  if (*type != "BPE" && *type != "WordPiece")
    return file.unsupported("model.type", "model", *type);
  TFC_RT_RETURN_IF_ERROR(parseVocab(file, **spec, model.vocab));
  if (*type == "BPE") {
    model.kind = ModelKind::Bpe;
    return parseBpe(file, **spec, model);
  }
  model.kind = ModelKind::WordPiece;
  return parseWordPiece(file, **spec, model);
}

} // namespace

Status addMerge(Model &model, const std::string &left, const std::string &right,
                int32_t rank) {
  const std::string &prefix = model.bpe.continuingPrefix;
  std::string merged =
      left + (!prefix.empty() && right.compare(0, prefix.size(), prefix) == 0
                  ? right.substr(prefix.size())
                  : right);
  for (const std::string *token :
       std::initializer_list<const std::string *>{&left, &right, &merged})
    if (!model.vocab.find(*token))
      return Status::error("merge '" + left + " " + right + "': token '" +
                           *token + "' is not in the vocabulary");
  uint64_t key = (static_cast<uint64_t>(*model.vocab.find(left)) << 32) |
                 static_cast<uint32_t>(*model.vocab.find(right));
  model.bpe.merges.emplace(key,
                           std::make_pair(rank, *model.vocab.find(merged)));
  return Status::success();
}

Expected<TokenizerImpl> parseTokenizerJson(std::string_view text,
                                           const std::string &name) {
  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error(name + ": not valid JSON");
  if (!root.is_object())
    return Status::error(name + ": expected a JSON object, found " +
                         root.type_name());
  JsonFile file(name);
  TokenizerImpl impl;
  impl.name = name;
  TFC_RT_RETURN_IF_ERROR(parseModel(file, root, impl.model));
  TFC_RT_RETURN_IF_ERROR(parseAddedTokens(file, root, impl));
  TFC_RT_RETURN_IF_ERROR(parseNormalizer(file, root, impl.normalizer));
  TFC_RT_RETURN_IF_ERROR(parsePreTokenizer(file, root, impl.preTokenizer));
  TFC_RT_RETURN_IF_ERROR(parsePostProcessing(file, root, impl));
  return impl;
}

} // namespace tfc::rt::tok
