//===- TextOutput.cpp - Prompts in, streamed text out ---------------------===//

#include "tools/tfc/TextOutput.h"

#include "tools/tfc/Inputs.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

using namespace tfc;
using namespace tfc::driver;

void driver::addPromptOptions(CLI::App &command, PromptOptions &options) {
  command.add_option("--tokenizer", options.tokenizer,
                     "tokenizer.json (or vocab.json + merges.txt, vocab.txt, "
                     "or a folder holding them)");
  auto *prompt = command.add_option("--prompt", options.text,
                                    "Prompt text (needs --tokenizer)");
  auto *ids = command.add_option("--ids", options.ids,
                                 "Prompt as token ids, e.g. 464,3139,286");
  prompt->excludes(ids);
}

int64_t TextStream::eosId() const {
  if (!tokenizer)
    return -1;
  const auto &special = tokenizer->specialIds();
  return special.eos ? *special.eos : -1;
}

void TextStream::begin(const std::vector<int32_t> &prompt) {
  if (!tokenizer) {
    for (size_t i = 0; i < prompt.size(); ++i)
      pending += (i ? " " : "") + std::to_string(prompt[i]);
    pending += " |";
    return;
  }
  rt::Expected<std::string> text = tokenizer->decode(prompt, false);
  pending = text ? *text : std::string();
}

bool TextStream::push(int32_t id, const std::vector<std::string> &stops) {
  generated.push_back(id);
  if (!tokenizer) {
    generatedText += " " + std::to_string(id);
  } else if (rt::Expected<std::string> text = tokenizer->decode(generated)) {
    generatedText = text.take();
  }
  for (const std::string &stop : stops)
    if (!stop.empty() && generatedText.find(stop) != std::string::npos)
      return true;
  return false;
}

void TextStream::flush(llvm::raw_ostream &os) {
  os << pending;
  pending.clear();
  size_t complete = rt::tok::completeUtf8Prefix(generatedText);
  // Decoding the whole sequence again can change earlier bytes only in a
  // held-back tail, never what was written (complete characters).
  if (complete > written) {
    os << llvm::StringRef(generatedText).slice(written, complete);
    written = complete;
  }
  os.flush();
}

void TextStream::finish(llvm::raw_ostream &os) {
  flush(os);
  if (written < generatedText.size())
    os << llvm::StringRef(generatedText).substr(written);
  written = generatedText.size();
  os << "\n";
}

std::optional<TextStream> driver::openTextStream(const PromptOptions &options) {
  if (options.tokenizer.empty())
    return TextStream(std::nullopt);
  rt::Expected<rt::tok::Tokenizer> tokenizer =
      rt::tok::Tokenizer::load(options.tokenizer);
  if (!tokenizer) {
    llvm::errs() << "error: " << tokenizer.message() << "\n";
    return std::nullopt;
  }
  tokenizer->disableTruncation();
  tokenizer->disablePadding();
  return TextStream(tokenizer.take());
}

std::optional<std::vector<int32_t>>
driver::promptIds(const PromptOptions &options, const TextStream &stream) {
  std::vector<int32_t> ids;
  if (!options.text.empty() || options.ids.empty()) {
    if (!stream.hasTokenizer()) {
      llvm::errs() << "error: a text prompt needs --tokenizer (or give the "
                      "prompt as --ids)\n";
      return std::nullopt;
    }
    rt::Expected<rt::tok::Encoding> encoded =
        stream.getTokenizer()->encode(options.text, /*addSpecialTokens=*/false);
    if (!encoded) {
      llvm::errs() << "error: --prompt: " << encoded.message() << "\n";
      return std::nullopt;
    }
    ids = encoded->ids;
  } else {
    rt::Expected<std::vector<int64_t>> parsed = parseIntList(options.ids);
    if (!parsed) {
      llvm::errs() << "error: --ids: " << parsed.message() << "\n";
      return std::nullopt;
    }
    for (int64_t id : *parsed) {
      if (id < 0 || id > INT32_MAX) {
        llvm::errs() << "error: --ids: " << id << " is not a token id\n";
        return std::nullopt;
      }
      ids.push_back(static_cast<int32_t>(id));
    }
  }
  if (ids.empty()) {
    llvm::errs() << "error: the prompt is empty (no tokens)\n";
    return std::nullopt;
  }
  return ids;
}
