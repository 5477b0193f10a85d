//===- TokenizerImpl.h - The parts of a tokenizer ---------------*- C++ -*-===//
//
// Internal to runtime/tokenizer: the pipeline of a Hugging Face tokenizer as
// plain data (what tokenizer.json declares), filled by TokenizerJson.cpp or by
// the GPT-2 / BERT vocabulary loaders, and the functions that run each stage.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TOKENIZER_TOKENIZERIMPL_H
#define TFC_RUNTIME_TOKENIZER_TOKENIZERIMPL_H

#include "runtime/Status.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tfc::rt::tok {

/// An entry of "added_tokens": matched in the text before pre-tokenization.
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  /// Matched in the normalized text (true) or in the input (false).
  bool normalized = false;
};

/// BertNormalizer; `present` false means no normalizer.
struct Normalizer {
  bool present = false;
  bool cleanText = true;
  bool handleChineseChars = true;
  bool stripAccents = true;
  bool lowercase = true;
};

enum class PreTokenizerKind { None, Bert, ByteLevel };

struct PreTokenizer {
  PreTokenizerKind kind = PreTokenizerKind::None;
  /// ByteLevel: put a space before text that does not start with one.
  bool addPrefixSpace = false;
  /// ByteLevel: split with the GPT-2 regex first.
  bool useRegex = true;
};

/// Token <-> id for the model (not the added tokens).
struct Vocab {
  std::unordered_map<std::string, int32_t> ids;
  /// Indexed by id; `present[id]` is false for ids no token has.
  std::vector<std::string> tokens;
  std::vector<bool> present;

  /// Adds `token` as `id`; an error (without context) for a negative or huge
  /// id or a token given twice.
  Status add(const std::string &token, int64_t id);
  std::optional<int32_t> find(const std::string &token) const;
};

enum class ModelKind { Bpe, WordPiece };

struct BpeModel {
  /// (left id << 32 | right id) -> (rank, id of the merged token).
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges;
  std::optional<int32_t> unk;
  bool fuseUnk = false;
  bool ignoreMerges = false;
  std::string continuingPrefix;
  std::string endOfWordSuffix;
};

struct WordPieceModel {
  int32_t unk = 0;
  std::string prefix = "##";
  size_t maxInputChars = 100;
};

struct Model {
  ModelKind kind = ModelKind::Bpe;
  Vocab vocab;
  BpeModel bpe;
  WordPieceModel wordPiece;
};

/// One element of a TemplateProcessing "single" template.
struct TemplatePiece {
  bool sequence = false; ///< $A; otherwise the special tokens below
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
};

/// TemplateProcessing or BertProcessing (as a template). ByteLevel's
/// post-processor only trims offsets, so it is `present = false` here.
struct PostProcessor {
  bool present = false;
  std::vector<TemplatePiece> single;
};

enum class DecoderKind { None, ByteLevel, WordPiece };

struct Decoder {
  DecoderKind kind = DecoderKind::None;
  std::string prefix = "##";
  bool cleanup = true;
};

struct Truncation {
  bool present = false;
  size_t maxLength = 0;
  bool left = false; ///< direction "Left": keep the end
};

struct Padding {
  bool present = false;
  std::optional<size_t> fixed; ///< Fixed(n); otherwise BatchLongest
  size_t multipleOf = 0;
  bool left = false;
  int32_t padId = 0;
  std::string padToken;
};

struct Gpt2Regex;

struct TokenizerImpl {
  std::string name; ///< for error messages
  std::vector<AddedToken> added;
  Normalizer normalizer;
  PreTokenizer preTokenizer;
  Model model;
  PostProcessor postProcessor;
  Decoder decoder;
  Truncation truncation;
  Padding padding;

  // Derived by finalize().
  std::unordered_map<int32_t, size_t> addedById;
  std::unordered_map<std::string, size_t> addedByContent;
  /// Contents of the normalized=true added tokens after normalization.
  std::vector<std::string> normalizedContent;
  SpecialTokenIds specials;
  std::shared_ptr<const Gpt2Regex> regex;
};

/// Fills the derived fields and compiles the regex.
Status finalize(TokenizerImpl &impl);

/// TokenizerJson.cpp: the pipeline a tokenizer.json declares.
Expected<TokenizerImpl> parseTokenizerJson(std::string_view text,
                                           const std::string &name);

/// Records merge number `rank` of `left` + `right` in a BPE model (the
/// vocabulary and continuing prefix already set); an error without context
/// when a token is not in the vocabulary.
Status addMerge(Model &model, const std::string &left, const std::string &right,
                int32_t rank);

/// Normalizer.cpp: BertNormalizer on valid UTF-8.
std::string normalize(const Normalizer &normalizer, std::string_view text);

/// PreTokenizer.cpp: the words of valid UTF-8 text, byte-mapped for
/// ByteLevel.
Expected<std::shared_ptr<const Gpt2Regex>> compileGpt2Regex();
Status preTokenize(const TokenizerImpl &impl, std::string_view text,
                   std::vector<std::string> &words);
/// The GPT-2 byte -> printable character table (as UTF-8), and its inverse
/// (-1 for characters that are not in it).
const std::string &byteToUnicode(unsigned char byte);
int byteFromUnicode(char32_t c);

/// Models.cpp: appends the ids of one pre-tokenized word.
void tokenizeWord(const Model &model, const std::string &word,
                  std::vector<int32_t> &ids);

/// Decoder.cpp: the text of vocabulary tokens.
std::string decodeTokens(const Decoder &decoder,
                         const std::vector<std::string> &tokens);

} // namespace tfc::rt::tok

#endif // TFC_RUNTIME_TOKENIZER_TOKENIZERIMPL_H
