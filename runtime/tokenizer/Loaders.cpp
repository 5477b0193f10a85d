//===- Loaders.cpp - tokenizer.json, GPT-2 and BERT vocabulary files ------===//

#include "runtime/tokenizer/JsonFile.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/TokenizerImpl.h"

#include "runtime/MappedFile.h"

#include <sys/stat.h>

namespace tfc::rt::tok {

namespace {

/// Tokenizer files are text; 1 GiB is far beyond any real one.
constexpr uint64_t kMaxFileBytes = uint64_t(1) << 30;

Expected<std::string> readText(const std::string &path) {
  Expected<std::shared_ptr<MappedFile>> file =
      MappedFile::open(path, kMaxFileBytes);
  if (!file)
    return file.status();
  const auto *data = reinterpret_cast<const char *>((*file)->data());
  return std::string(data, (*file)->size());
}

/// The lines of a text file, without "\n" or "\r\n"; no final empty line.
std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(std::move(line));
    begin = end + 1;
  }
  return lines;
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool exists(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dirName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Makes the vocabulary tokens in `names` special added tokens (matched in
/// the input, skipped by decode).
void addSpecials(TokenizerImpl &impl,
                 std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (std::optional<int32_t> id = impl.model.vocab.find(name))
      impl.added.push_back({name, *id, /*special=*/true, false, false,
                            /*normalized=*/false});
}

Status readGpt2Vocab(const std::string &path, Vocab &vocab) {
  Expected<std::string> text = readText(path);
  if (!text)
    return text.status();
  json root = json::parse(text->begin(), text->end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error(path + ": not valid JSON");
  if (!root.is_object() || root.empty())
    return Status::error(path + ": expected a non-empty JSON object of "
                                "token -> id");
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it.value().is_number_integer())
      return Status::error(path + ": field '" + it.key() +
                           "': expected an integer id, found " +
                           it.value().type_name());
    Status added = vocab.add(it.key(), it.value().get<int64_t>());
    if (!added.ok())
      return Status::error(path + ": field '" + it.key() +
                           "': " + added.message());
  }
  return Status::success();
}

Status readGpt2Merges(const std::string &path, Model &model) {
  Expected<std::string> text = readText(path);
  if (!text)
    return text.status();
  std::vector<std::string> lines = splitLines(*text);
  int32_t rank = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string &line = lines[i];
    if (line.compare(0, 8, "#version") == 0)
      continue;
    std::string where = path + ": line " + std::to_string(i + 1);
    size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != line.npos)
      return Status::error(where +
                           ": expected two tokens separated by one "
                           "space, found '" +
                           line + "'");
    Status added =
        addMerge(model, line.substr(0, space), line.substr(space + 1), rank++);
    if (!added.ok())
      return Status::error(where + ": " + added.message());
  }
  return Status::success();
}

Expected<Tokenizer> finish(TokenizerImpl impl) {
  TFC_RT_RETURN_IF_ERROR(finalize(impl));
  return Tokenizer::fromImpl(
      std::make_shared<const TokenizerImpl>(std::move(impl)));
}

} // namespace

Expected<Tokenizer>
Tokenizer::fromImpl(std::shared_ptr<const TokenizerImpl> impl) {
  return Tokenizer(std::move(impl));
}

Expected<Tokenizer> Tokenizer::fromJson(std::string_view json,
                                        const std::string &name) {
  Expected<TokenizerImpl> impl = parseTokenizerJson(json, name);
  if (!impl)
    return impl.status();
  return finish(impl.take());
}

Expected<Tokenizer> Tokenizer::fromFile(const std::string &path) {
  Expected<std::string> text = readText(path);
  if (!text)
    return text.status();
  return fromJson(*text, path);
}

Expected<Tokenizer> Tokenizer::fromGpt2Files(const std::string &vocabJson,
                                             const std::string &mergesTxt) {
  TokenizerImpl impl;
  impl.name = vocabJson;
  TFC_RT_RETURN_IF_ERROR(readGpt2Vocab(vocabJson, impl.model.vocab));
  TFC_RT_RETURN_IF_ERROR(readGpt2Merges(mergesTxt, impl.model));
  impl.model.kind = ModelKind::Bpe;
  impl.preTokenizer.kind = PreTokenizerKind::ByteLevel;
  impl.decoder.kind = DecoderKind::ByteLevel;
  addSpecials(impl, {"<|endoftext|>"});
  return finish(std::move(impl));
}

Expected<Tokenizer> Tokenizer::fromBertVocab(const std::string &vocabTxt,
                                             bool lowercase) {
  Expected<std::string> text = readText(vocabTxt);
  if (!text)
    return text.status();
  TokenizerImpl impl;
  impl.name = vocabTxt;
  std::vector<std::string> lines = splitLines(*text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string token = lines[i];
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t'))
      token.pop_back();
    Status added = impl.model.vocab.add(token, static_cast<int64_t>(i));
    if (!added.ok())
      return Status::error(vocabTxt + ": line " + std::to_string(i + 1) + ": " +
                           added.message());
  }
  impl.model.kind = ModelKind::WordPiece;
  for (const char *required : {"[UNK]", "[CLS]", "[SEP]"})
    if (!impl.model.vocab.find(required))
      return Status::error(vocabTxt + ": no '" + required + "' token");
  impl.model.wordPiece.unk = *impl.model.vocab.find("[UNK]");
  impl.normalizer = {true, true, true, lowercase, lowercase};
  impl.preTokenizer.kind = PreTokenizerKind::Bert;
  TemplatePiece cls{false, {*impl.model.vocab.find("[CLS]")}, {"[CLS]"}};
  TemplatePiece sep{false, {*impl.model.vocab.find("[SEP]")}, {"[SEP]"}};
  impl.postProcessor = {true, {cls, TemplatePiece{true, {}, {}}, sep}};
  impl.decoder.kind = DecoderKind::WordPiece;
  addSpecials(impl, {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"});
  return finish(std::move(impl));
}

Expected<Tokenizer> Tokenizer::load(const std::string &path) {
  if (isDirectory(path)) {
    std::string dir = path + "/";
    if (exists(dir + "tokenizer.json"))
      return fromFile(dir + "tokenizer.json");
    if (exists(dir + "vocab.json") && exists(dir + "merges.txt"))
      return fromGpt2Files(dir + "vocab.json", dir + "merges.txt");
    if (exists(dir + "vocab.txt"))
      return fromBertVocab(dir + "vocab.txt");
    return Status::error(path + ": no tokenizer.json, vocab.json + merges.txt "
                                "or vocab.txt in this directory");
  }
  std::string name = baseName(path);
  if (endsWith(name, ".txt"))
    return fromBertVocab(path);
  if (name == "vocab.json")
    return fromGpt2Files(path, dirName(path) + "/merges.txt");
  return fromFile(path);
}

} // namespace tfc::rt::tok
