//===- TextOutput.h - Prompts in, streamed text out -------------*- C++ -*-===//
//
// What `tfc generate` shares with other text commands: a prompt given as
// text (through a tokenizer) or as ids, and a TextStream that turns tokens
// into text as they arrive. Byte-level tokens can end in the middle of a
// UTF-8 character; the stream holds such bytes back until the character is
// complete, so what it prints is always whole characters.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_TEXTOUTPUT_H
#define TFC_TOOLS_TFC_TEXTOUTPUT_H

#include "runtime/tokenizer/Tokenizer.h"

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tfc::driver {

struct PromptOptions {
  std::string tokenizer; // tokenizer.json, vocab.json, vocab.txt or a folder
  std::string text;      // --prompt
  std::string ids;       // --ids 1,2,3
};

/// --tokenizer, --prompt, --ids.
void addPromptOptions(CLI::App &command, PromptOptions &options);

/// Generated tokens as text (or as ids, without a tokenizer).
class TextStream {
public:
  explicit TextStream(std::optional<rt::tok::Tokenizer> tokenizer)
      : tokenizer(std::move(tokenizer)) {}

  bool hasTokenizer() const { return tokenizer.has_value(); }
  const rt::tok::Tokenizer *getTokenizer() const {
    return tokenizer ? &*tokenizer : nullptr;
  }
  /// The tokenizer's end-of-sequence id, or -1.
  int64_t eosId() const;

  /// Prints the prompt (as text, or ids) before generation starts.
  void begin(const std::vector<int32_t> &prompt);
  /// Adds a generated token; true when the text now contains one of `stops`.
  bool push(int32_t id, const std::vector<std::string> &stops);
  /// Writes what is complete and not yet written.
  void flush(llvm::raw_ostream &os);
  /// Writes the rest (held-back bytes too) and a newline.
  void finish(llvm::raw_ostream &os);
  /// The generated text so far (without the prompt).
  const std::string &text() const { return generatedText; }

private:
  std::optional<rt::tok::Tokenizer> tokenizer;
  std::vector<int32_t> generated;
  std::string generatedText;
  std::string pending; // the prompt, before the first flush
  size_t written = 0;  // bytes of generatedText already written
};

/// The stream for `options` (loads the tokenizer if one is given); prints
/// errors.
std::optional<TextStream> openTextStream(const PromptOptions &options);

/// The prompt as ids: --ids, or --prompt through the stream's tokenizer
/// (without special tokens, as decoders are prompted). Prints errors.
std::optional<std::vector<int32_t>> promptIds(const PromptOptions &options,
                                              const TextStream &stream);


} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_TEXTOUTPUT_H
