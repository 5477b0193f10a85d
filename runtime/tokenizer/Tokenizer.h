//===- Tokenizer.h - Hugging Face-compatible tokenizers ---------*- C++ -*-===//
//
// Loads a Hugging Face `tokenizer.json` (or GPT-2's vocab.json + merges.txt,
// or BERT's vocab.txt) and encodes text to ids and back with the same results
// as the Python `tokenizers` library (docs/tokenizers.md says what is
// supported and how equality is tested).
//
// Like the rest of the runtime this builds without exceptions and never
// aborts: loading and encoding return Expected values whose messages name the
// file and the field ("tokenizer.json: field 'model.vocab': ...").
//
// Input text is bytes. Bytes that are not valid UTF-8 are replaced the way
// Python's bytes.decode('utf-8', errors='replace') does (one U+FFFD per
// maximal subpart) before anything else.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TOKENIZER_TOKENIZER_H
#define TFC_RUNTIME_TOKENIZER_TOKENIZER_H

#include "runtime/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt::tok {

struct TokenizerImpl;

/// What encode() produces: parallel arrays, one entry per token.
struct Encoding {
  std::vector<int32_t> ids;
  /// The vocabulary string of each id ("Ġworld", "##ing", "[CLS]").
  std::vector<std::string> tokens;
  /// 1 for real tokens, 0 for padding.
  std::vector<int32_t> attentionMask;
  /// 1 for tokens the post-processor or padding added, and for added tokens
  /// declared special.
  std::vector<int32_t> specialTokensMask;
};

/// The ids of the conventional special tokens the vocabulary has, found by
/// their usual names ([CLS], <|endoftext|>, <s>, ...), the model's unk_token
/// and the padding section.
struct SpecialTokenIds {
  std::optional<int32_t> bos, eos, pad, cls, sep, unk, mask;
};

class Tokenizer {
public:
  /// A Hugging Face tokenizer.json.
  static Expected<Tokenizer> fromFile(const std::string &path);
  /// The text of a tokenizer.json; `name` is used in error messages.
  static Expected<Tokenizer> fromJson(std::string_view json,
                                      const std::string &name);
  /// GPT-2's two files: byte-level BPE with add_prefix_space=false, the GPT-2
  /// pre-tokenizer regex and the ByteLevel decoder; "<|endoftext|>" is a
  /// special token when the vocabulary has it.
  static Expected<Tokenizer> fromGpt2Files(const std::string &vocabJson,
                                           const std::string &mergesTxt);
  /// BERT's vocab.txt (one token per line, id = line number): the
  /// BertNormalizer (clean text, CJK spacing, and with `lowercase` accent
  /// stripping and lower-casing), BertPreTokenizer, WordPiece ("##", 100
  /// chars, [UNK]), "[CLS] $A [SEP]" and the WordPiece decoder; [PAD],
  /// [UNK], [CLS], [SEP] and [MASK] are special tokens when present.
  static Expected<Tokenizer> fromBertVocab(const std::string &vocabTxt,
                                           bool lowercase = true);
  /// Picks by name: a directory holding tokenizer.json, vocab.json +
  /// merges.txt or vocab.txt (in that order); a file named *.txt (BERT
  /// vocabulary) or vocab.json (GPT-2, merges.txt next to it); any other
  /// file is read as a tokenizer.json.
  static Expected<Tokenizer> load(const std::string &path);

  /// Tokenizes `text` (bytes; see the file comment for invalid UTF-8). With
  /// `addSpecialTokens` the post-processor runs ([CLS] ... [SEP]). Truncation
  /// and padding apply as the file declares them unless disabled below.
  Expected<Encoding> encode(std::string_view text,
                            bool addSpecialTokens = true) const;
  /// Turns ids back into text with the declared decoder. An id outside the
  /// vocabulary is an error.
  Expected<std::string> decode(const std::vector<int32_t> &ids,
                               bool skipSpecialTokens = true) const;

  std::optional<int32_t> tokenToId(std::string_view token) const;
  std::optional<std::string> idToToken(int32_t id) const;
  /// Distinct tokens of the model vocabulary and the added tokens (HF's
  /// get_vocab_size(with_added_tokens=True)).
  size_t vocabSize() const;
  const SpecialTokenIds &specialIds() const;
  /// Whether `id` is an added token declared special.
  bool isSpecial(int32_t id) const;

  /// Like HF's no_truncation() / no_padding(): ignore the file's sections.
  void disableTruncation() { truncate = false; }
  /// Like HF's enable_truncation(max_length): truncate to `maxLength` ids
  /// (special tokens included), whatever the file declares. sentence-
  /// transformers sets its own max_seq_length this way.
  void setMaxLength(size_t maxLength) { maxLengthOverride = maxLength; }
  void disablePadding() { pad = false; }
  bool hasTruncation() const;
  bool hasPadding() const;

  /// For the loaders (Loaders.cpp).
  static Expected<Tokenizer>
  fromImpl(std::shared_ptr<const TokenizerImpl> impl);

private:
  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl);

  std::shared_ptr<const TokenizerImpl> impl;
  bool truncate = true;
  bool pad = true;
  std::optional<size_t> maxLengthOverride;
};

/// How many leading bytes of `text` form complete UTF-8 characters: what a
/// stream of decoded tokens can print now (byte-level BPE splits characters
/// across tokens). An invalid byte counts as complete: it never becomes valid.
size_t completeUtf8Prefix(std::string_view text);

} // namespace tfc::rt::tok

#endif // TFC_RUNTIME_TOKENIZER_TOKENIZER_H
