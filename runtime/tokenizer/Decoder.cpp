//===- Decoder.cpp - ByteLevel and WordPiece decoders ---------------------===//

#include "runtime/tokenizer/TokenizerImpl.h"
#include "runtime/tokenizer/Unicode.h"

namespace tfc::rt::tok {

namespace {

void replaceAll(std::string &text, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
}

/// HF's WordPiece cleanup: English spacing before punctuation and
/// contractions, applied to each token on its own.
void cleanup(std::string &token) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto &[from, to] : kRules)
    replaceAll(token, from, to);
}

std::string decodeWordPiece(const Decoder &decoder,
                            const std::vector<std::string> &tokens) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string token = tokens[i];
    if (i != 0) {
      if (token.compare(0, decoder.prefix.size(), decoder.prefix) == 0)
        token.erase(0, decoder.prefix.size());
      else
        token.insert(0, " ");
    }
    if (decoder.cleanup)
      cleanup(token);
    out += token;
  }
  return out;
}

/// Maps each character back to its byte; a token with a character outside
/// the table keeps its UTF-8 bytes (as HF does). Invalid UTF-8 in the result
/// is replaced like everywhere else.
std::string decodeByteLevel(const std::vector<std::string> &tokens) {
  std::string bytes;
  for (const std::string &token : tokens) {
    std::string mapped;
    bool allMapped = true;
    for (char32_t c : toUtf32(token)) {
      int b = byteFromUnicode(c);
      if (b < 0) {
        allMapped = false;
        break;
      }
      mapped.push_back(static_cast<char>(b));
    }
    bytes += allMapped ? mapped : token;
  }
  return sanitizeUtf8(bytes);
}

} // namespace

std::string decodeTokens(const Decoder &decoder,
                         const std::vector<std::string> &tokens) {
  switch (decoder.kind) {
  case DecoderKind::ByteLevel:
    return decodeByteLevel(tokens);
  case DecoderKind::WordPiece:
    return decodeWordPiece(decoder, tokens);
  case DecoderKind::None:
    break;
  }
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i)
    out += (i ? " " : "") + tokens[i];
  return out;
}

} // namespace tfc::rt::tok
