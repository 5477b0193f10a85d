//===- Tokenizer.cpp - Encode and decode ----------------------------------===//
//
// encode: replace invalid UTF-8, split off the added tokens matched in the
// input, normalize the rest, split off the added tokens matched in normalized
// text, pre-tokenize, run the model on each word, then truncate, add the
// post-processor's special tokens and pad.
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/TokenizerImpl.h"
#include "runtime/tokenizer/Unicode.h"

namespace tfc::rt::tok {

namespace {

/// A piece of the input: an added token (index into impl.added) or text.
struct Segment {
  std::string text;
  int64_t added = -1;
};

/// The whitespace an lstrip / rstrip added token absorbs: the extent of
/// White_Space characters before `begin` (not before `floor`) or from `end`.
size_t whitespaceBefore(std::string_view text, size_t begin, size_t floor) {
  std::u32string before = toUtf32(text.substr(floor, begin - floor));
  size_t bytes = 0;
  for (auto it = before.rbegin(); it != before.rend() && isWhiteSpace(*it);
       ++it) {
    std::string c;
    appendUtf8(c, *it);
    bytes += c.size();
  }
  return begin - bytes;
}

size_t whitespaceAfter(std::string_view text, size_t end) {
  std::u32string after = toUtf32(text.substr(end));
  for (char32_t c : after) {
    if (!isWhiteSpace(c))
      break;
    std::string s;
    appendUtf8(s, c);
    end += s.size();
  }
  return end;
}

/// Splits `text` on the added tokens whose `normalized` flag is
/// `normalizedPass`, leftmost-longest like HF's Aho-Corasick matcher.
void splitAdded(const TokenizerImpl &impl, std::string_view text,
                bool normalizedPass, std::vector<Segment> &out) {
  size_t done = 0, pos = 0;
  while (pos < text.size()) {
    int64_t best = -1;
    size_t bestLength = 0;
    for (size_t i = 0; i < impl.added.size(); ++i) {
      if (impl.added[i].normalized != normalizedPass)
        continue;
      const std::string &content =
          normalizedPass ? impl.normalizedContent[i] : impl.added[i].content;
      if (content.size() > bestLength &&
          text.compare(pos, content.size(), content) == 0) {
        best = static_cast<int64_t>(i);
        bestLength = content.size();
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    const AddedToken &token = impl.added[static_cast<size_t>(best)];
    size_t begin = token.lstrip ? whitespaceBefore(text, pos, done) : pos;
    size_t end = token.rstrip ? whitespaceAfter(text, pos + bestLength)
                              : pos + bestLength;
    if (begin > done)
      out.push_back({std::string(text.substr(done, begin - done)), -1});
    out.push_back({token.content, best});
    done = pos = end;
  }
  if (done < text.size())
    out.push_back({std::string(text.substr(done)), -1});
}

/// Normalizes, pre-tokenizes and tokenizes text that holds no added token
/// matched in the input.
Status encodeText(const TokenizerImpl &impl, const std::string &text,
                  std::vector<int32_t> &ids) {
  std::vector<Segment> segments;
  splitAdded(impl, normalize(impl.normalizer, text), true, segments);
  for (const Segment &segment : segments) {
    if (segment.added >= 0) {
      ids.push_back(impl.added[static_cast<size_t>(segment.added)].id);
      continue;
    }
    std::vector<std::string> words;
    TFC_RT_RETURN_IF_ERROR(preTokenize(impl, segment.text, words));
    for (const std::string &word : words)
      tokenizeWord(impl.model, word, ids);
  }
  return Status::success();
}

size_t templateLength(const PostProcessor &post) {
  size_t n = 0;
  for (const TemplatePiece &piece : post.single)
    n += piece.ids.size();
  return n;
}

void applyPadding(const Padding &padding, Encoding &encoding) {
  size_t target = padding.fixed ? *padding.fixed : encoding.ids.size();
  if (padding.multipleOf > 0 && target % padding.multipleOf != 0)
    target += padding.multipleOf - target % padding.multipleOf;
  if (encoding.ids.size() >= target)
    return;
  size_t n = target - encoding.ids.size();
  auto at = [&](auto &v) { return padding.left ? v.begin() : v.end(); };
  encoding.ids.insert(at(encoding.ids), n, padding.padId);
  encoding.tokens.insert(at(encoding.tokens), n, padding.padToken);
  encoding.attentionMask.insert(at(encoding.attentionMask), n, 0);
}

/// The conventional special tokens, found by name.
SpecialTokenIds findSpecials(const TokenizerImpl &impl) {
  auto find = [&](std::initializer_list<const char *> names) {
    for (const char *name : names) {
      auto it = impl.addedByContent.find(name);
      if (it != impl.addedByContent.end())
        return std::optional<int32_t>(impl.added[it->second].id);
      if (std::optional<int32_t> id = impl.model.vocab.find(name))
        return id;
    }
    return std::optional<int32_t>();
  };
  SpecialTokenIds ids;
  ids.bos = find({"<s>", "<|endoftext|>", "<|begin_of_text|>"});
  ids.eos = find({"</s>", "<|endoftext|>", "<|end_of_text|>"});
  ids.cls = find({"[CLS]", "<cls>"});
  ids.sep = find({"[SEP]", "<sep>"});
  ids.mask = find({"[MASK]", "<mask>"});
  ids.pad = impl.padding.present ? std::optional<int32_t>(impl.padding.padId)
                                 : find({"[PAD]", "<pad>"});
  if (impl.model.kind == ModelKind::WordPiece)
    ids.unk = impl.model.wordPiece.unk;
  else
    ids.unk = impl.model.bpe.unk ? impl.model.bpe.unk : find({"<unk>"});
  return ids;
}

} // namespace

Tokenizer::Tokenizer(std::shared_ptr<const TokenizerImpl> impl)
    : impl(std::move(impl)) {}

Status finalize(TokenizerImpl &impl) {
  for (size_t i = 0; i < impl.added.size(); ++i) {
    AddedToken &token = impl.added[i];
    // Like HF: an added token that is also a vocabulary token has that id.
    if (std::optional<int32_t> id = impl.model.vocab.find(token.content))
      token.id = *id;
    impl.addedById.emplace(token.id, i);
    impl.addedByContent.emplace(token.content, i);
    impl.normalizedContent.push_back(
        token.normalized ? normalize(impl.normalizer, token.content)
                         : token.content);
  }
  if (impl.preTokenizer.kind == PreTokenizerKind::ByteLevel &&
      impl.preTokenizer.useRegex) {
    Expected<std::shared_ptr<const Gpt2Regex>> regex = compileGpt2Regex();
    if (!regex)
      return regex.status();
    impl.regex = regex.take();
  }
  impl.specials = findSpecials(impl);
  return Status::success();
}

Expected<Encoding> Tokenizer::encode(std::string_view text,
                                     bool addSpecialTokens) const {
  std::vector<Segment> segments;
  splitAdded(*impl, sanitizeUtf8(text), false, segments);
  std::vector<int32_t> ids;
  for (const Segment &segment : segments) {
    if (segment.added >= 0)
      ids.push_back(impl->added[static_cast<size_t>(segment.added)].id);
    else
      TFC_RT_RETURN_IF_ERROR(encodeText(*impl, segment.text, ids));
  }
  bool post = addSpecialTokens && impl->postProcessor.present;
  if (maxLengthOverride || (truncate && impl->truncation.present)) {
    size_t maxLength = maxLengthOverride.value_or(impl->truncation.maxLength);
    size_t added = post ? templateLength(impl->postProcessor) : 0;
    if (maxLength < added)
      return Status::error(impl->name +
                           (maxLengthOverride
                                ? std::string(": max length ")
                                : std::string(": field 'truncation.max_length': ")) +
                           std::to_string(maxLength) + " leaves no room for the " +
                           std::to_string(added) + " special tokens");
    size_t keep = maxLength - added;
    if (ids.size() > keep)
      ids.erase(impl->truncation.left ? ids.begin() : ids.begin() + keep,
                impl->truncation.left ? ids.end() - keep : ids.end());
  }
  std::vector<std::string> tokens;
  for (int32_t id : ids)
    tokens.push_back(idToToken(id).value_or(""));
  Encoding encoding;
  for (const TemplatePiece &piece : impl->postProcessor.single) {
    if (!post)
      break;
    const std::vector<int32_t> &partIds = piece.sequence ? ids : piece.ids;
    const std::vector<std::string> &partTokens =
        piece.sequence ? tokens : piece.tokens;
    encoding.ids.insert(encoding.ids.end(), partIds.begin(), partIds.end());
    encoding.tokens.insert(encoding.tokens.end(), partTokens.begin(),
                           partTokens.end());
  }
  if (!post) {
    encoding.ids = std::move(ids);
    encoding.tokens = std::move(tokens);
  }
  encoding.attentionMask.assign(encoding.ids.size(), 1);
  if (pad && impl->padding.present)
    applyPadding(impl->padding, encoding);
  return encoding;
}

Expected<std::string> Tokenizer::decode(const std::vector<int32_t> &ids,
                                        bool skipSpecialTokens) const {
  std::vector<std::string> tokens;
  for (int32_t id : ids) {
    std::optional<std::string> token = idToToken(id);
    if (!token)
      return Status::error(impl->name + ": id " + std::to_string(id) +
                           " is not in the vocabulary");
    if (skipSpecialTokens) {
      auto it = impl->addedByContent.find(*token);
      if (it != impl->addedByContent.end() && impl->added[it->second].special)
        continue;
    }
    tokens.push_back(std::move(*token));
  }
  return decodeTokens(impl->decoder, tokens);
}

std::optional<int32_t> Tokenizer::tokenToId(std::string_view token) const {
  auto it = impl->addedByContent.find(std::string(token));
  if (it != impl->addedByContent.end())
    return impl->added[it->second].id;
  return impl->model.vocab.find(std::string(token));
}

std::optional<std::string> Tokenizer::idToToken(int32_t id) const {
  auto it = impl->addedById.find(id);
  if (it != impl->addedById.end())
    return impl->added[it->second].content;
  const Vocab &vocab = impl->model.vocab;
  if (id < 0 || static_cast<size_t>(id) >= vocab.tokens.size() ||
      !vocab.present[static_cast<size_t>(id)])
    return std::nullopt;
  return vocab.tokens[static_cast<size_t>(id)];
}

size_t Tokenizer::vocabSize() const {
  size_t n = impl->model.vocab.ids.size();
  for (const auto &[content, index] : impl->addedByContent)
    n += impl->model.vocab.ids.count(content) == 0;
  return n;
}

const SpecialTokenIds &Tokenizer::specialIds() const { return impl->specials; }

bool Tokenizer::isSpecial(int32_t id) const {
  auto it = impl->addedById.find(id);
  return it != impl->addedById.end() && impl->added[it->second].special;
}

size_t completeUtf8Prefix(std::string_view text) {
  // Look back at most 3 bytes for the start of a character that needs more.
  size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    unsigned char c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80)
      continue; // a continuation byte: keep looking for the lead byte
    size_t need = (c & 0xE0) == 0xC0   ? 2
                  : (c & 0xF0) == 0xE0 ? 3
                  : (c & 0xF8) == 0xF0 ? 4
                                       : 1;
    return need > back ? n - back : n;
  }
  return n;
}

bool Tokenizer::hasTruncation() const {
  return maxLengthOverride || (truncate && impl->truncation.present);
}

bool Tokenizer::hasPadding() const { return pad && impl->padding.present; }

} // namespace tfc::rt::tok
