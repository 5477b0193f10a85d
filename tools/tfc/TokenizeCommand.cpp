//===- TokenizeCommand.cpp - tfc tokenize: text <-> token ids -------------===//
//
// Runs a Hugging Face-compatible tokenizer (runtime/tokenizer) the way
// llama.cpp's tokenize tool does: text in, one "id -> 'piece'" line per token
// out (or "[1, 2, 3]" with --ids-only); --ids decodes ids back to text.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"

#include "runtime/MappedFile.h"
#include "runtime/tokenizer/Tokenizer.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct TokenizeOptions {
  std::string tokenizer;
  std::string text;
  std::string file;
  std::string ids;
  bool idsOnly = false;
  bool noSpecial = false;
  bool noPadding = false;
  bool noTruncation = false;
};

/// "1,2,3", "1 2 3" or "[1, 2, 3]" (what --ids-only prints).
rt::Expected<std::vector<int32_t>> parseIds(const std::string &text) {
  std::vector<int32_t> ids;
  std::string item;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c != ',' && c != ' ' && c != '[' && c != ']') {
      item.push_back(c);
      continue;
    }
    if (item.empty())
      continue;
    char *end = nullptr;
    long long value = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0' || value < 0 || value > INT32_MAX)
      return rt::Status::error("--ids: '" + item + "' is not a token id");
    ids.push_back(static_cast<int32_t>(value));
    item.clear();
  }
  return ids;
}

/// The piece with control characters, quote and backslash escaped, so that
/// every token stays on its line.
std::string escape(const std::string &piece) {
  std::string out;
  for (char c : piece) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\'' || c == '\\')
      out += std::string("\\") + c;
    else if (byte < 0x20 || byte == 0x7F)
      out += "\\x" + std::string(1, "0123456789abcdef"[byte >> 4]) +
             "0123456789abcdef"[byte & 15];
    else
      out.push_back(c);
  }
  return out;
}

int decodeIds(const rt::tok::Tokenizer &tok, const TokenizeOptions &options) {
  rt::Expected<std::vector<int32_t>> ids = parseIds(options.ids);
  if (!ids) {
    llvm::errs() << "error: " << ids.message() << "\n";
    return 1;
  }
  rt::Expected<std::string> text = tok.decode(*ids, options.noSpecial);
  if (!text) {
    llvm::errs() << "error: " << text.message() << "\n";
    return 1;
  }
  llvm::outs() << *text << "\n";
  return 0;
}

void printEncoding(const rt::tok::Encoding &encoding, bool idsOnly) {
  if (idsOnly) {
    llvm::outs() << "[";
    for (size_t i = 0; i < encoding.ids.size(); ++i)
      llvm::outs() << (i ? ", " : "") << encoding.ids[i];
    llvm::outs() << "]\n";
    return;
  }
  for (size_t i = 0; i < encoding.ids.size(); ++i)
    llvm::outs() << llvm::format("%6d", encoding.ids[i]) << " -> '"
                 << escape(encoding.tokens[i]) << "'\n";
}

int runTokenize(const TokenizeOptions &options) {
  rt::Expected<rt::tok::Tokenizer> tok =
      rt::tok::Tokenizer::load(options.tokenizer);
  if (!tok) {
    llvm::errs() << "error: " << tok.message() << "\n";
    return 1;
  }
  if (options.noPadding)
    tok->disablePadding();
  if (options.noTruncation)
    tok->disableTruncation();
  if (!options.ids.empty())
    return decodeIds(*tok, options);
  std::string text = options.text;
  if (!options.file.empty()) {
    auto file = rt::MappedFile::open(options.file);
    if (!file) {
      llvm::errs() << "error: " << file.message() << "\n";
      return 1;
    }
    text.assign(reinterpret_cast<const char *>((*file)->data()),
                (*file)->size());
  }
  rt::Expected<rt::tok::Encoding> encoding =
      tok->encode(text, /*addSpecialTokens=*/!options.noSpecial);
  if (!encoding) {
    llvm::errs() << "error: " << encoding.message() << "\n";
    return 1;
  }
  printEncoding(*encoding, options.idsOnly);
  return 0;
}

} // namespace

CommandRunner driver::registerTokenizeCommand(CLI::App &app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App *command = app.add_subcommand(
      "tokenize", "Encode text to token ids or decode ids with a Hugging Face "
                  "tokenizer (tokenizer.json, vocab.json + merges.txt, "
                  "vocab.txt, or a directory holding one)");
  command
      ->add_option("--tokenizer", options->tokenizer,
                   "tokenizer file or "
                   "directory")
      ->required();
  CLI::Option_group *input = command->add_option_group("input");
  input->add_option("--text", options->text, "text to encode");
  input->add_option("--file", options->file, "encode this file's bytes");
  input->add_option("--ids", options->ids, "decode these ids (1,2,3)");
  input->require_option(1);
  command->add_flag("--ids-only", options->idsOnly, "print only [id, ...]");
  command->add_flag("--no-special", options->noSpecial,
                    "encode: add no special tokens ([CLS], [SEP]); decode: "
                    "leave special tokens out");
  command->add_flag("--no-padding", options->noPadding,
                    "ignore the padding the tokenizer file declares");
  command->add_flag("--no-truncation", options->noTruncation,
                    "ignore the truncation the tokenizer file declares");
  return [options] { return runTokenize(*options); };
}
