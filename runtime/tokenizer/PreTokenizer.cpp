//===- PreTokenizer.cpp - BertPreTokenizer and ByteLevel ------------------===//
//
// ByteLevel splits with GPT-2's regex (PCRE2 in UTF + UCP mode) and maps
// every byte of each piece to a printable character. Hugging Face runs the
// regex with Oniguruma, whose \s is PCRE2's \s plus U+0085 (NEL), so the
// pattern below spells \s as [\s\x{85}].
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/TokenizerImpl.h"
#include "runtime/tokenizer/Unicode.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

namespace tfc::rt::tok {

/// The compiled GPT-2 pattern; shared by copies of a Tokenizer (matching
/// allocates its own match data, so this is safe to use from many threads).
struct Gpt2Regex {
  pcre2_code *code = nullptr;
  ~Gpt2Regex() { pcre2_code_free(code); }
};

namespace {

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
constexpr const char *kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\x{85}\\p{L}\\p{N}]+"
    "|[\\s\\x{85}]+(?![^\\s\\x{85}])|[\\s\\x{85}]+";

/// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
/// the others for U+0100 onwards in byte order.
struct ByteTable {
  std::array<std::string, 256> toUnicode;
  std::array<int, 324> fromUnicode; // every mapped character is < U+0144
  ByteTable() {
    fromUnicode.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      int c = printable ? b : next++;
      appendUtf8(toUnicode[b], static_cast<char32_t>(c));
      fromUnicode[c] = b;
    }
  }
};

const ByteTable &byteTable() {
  static const ByteTable table;
  return table;
}

Status regexSplit(const Gpt2Regex &regex, std::string_view text,
                  std::vector<std::string> &pieces) {
  pcre2_match_data *match =
      pcre2_match_data_create_from_pattern(regex.code, nullptr);
  if (!match)
    return Status::error("out of memory for the pre-tokenizer regex");
  size_t pos = 0;
  Status status;
  while (pos < text.size()) {
    int rc = pcre2_match(regex.code, reinterpret_cast<PCRE2_SPTR>(text.data()),
                         text.size(), pos, PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) {
      pieces.emplace_back(text.substr(pos));
      break;
    }
    if (rc < 0) {
      status = Status::error("pre-tokenizer regex failed (PCRE2 error " +
                             std::to_string(rc) + ")");
      break;
    }
    PCRE2_SIZE *range = pcre2_get_ovector_pointer(match);
    if (range[0] > pos) // text no alternative matched stays a piece
      pieces.emplace_back(text.substr(pos, range[0] - pos));
    if (range[1] == range[0]) { // cannot happen with this pattern
      status = Status::error("pre-tokenizer regex matched nothing");
      break;
    }
    pieces.emplace_back(text.substr(range[0], range[1] - range[0]));
    pos = range[1];
  }
  pcre2_match_data_free(match);
  return status;
}

void splitBert(std::string_view text, std::vector<std::string> &words) {
  std::string word;
  for (char32_t c : toUtf32(text)) {
    if (isWhiteSpace(c) || isBertPunctuation(c)) {
      if (!word.empty())
        words.push_back(std::move(word));
      word.clear();
      if (!isWhiteSpace(c)) {
        words.emplace_back();
        appendUtf8(words.back(), c);
      }
      continue;
    }
    appendUtf8(word, c);
  }
  if (!word.empty())
    words.push_back(std::move(word));
}

Status splitByteLevel(const TokenizerImpl &impl, std::string_view text,
                      std::vector<std::string> &words) {
  std::string prefixed;
  if (impl.preTokenizer.addPrefixSpace && (text.empty() || text[0] != ' ')) {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  std::vector<std::string> pieces;
  if (impl.preTokenizer.useRegex)
    TFC_RT_RETURN_IF_ERROR(regexSplit(*impl.regex, text, pieces));
  else if (!text.empty())
    pieces.emplace_back(text);
  const ByteTable &table = byteTable();
  for (const std::string &piece : pieces) {
    std::string mapped;
    for (char byte : piece)
      mapped += table.toUnicode[static_cast<unsigned char>(byte)];
    words.push_back(std::move(mapped));
  }
  return Status::success();
}

} // namespace

Expected<std::shared_ptr<const Gpt2Regex>> compileGpt2Regex() {
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto regex = std::make_shared<Gpt2Regex>();
  regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern),
                              PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                              &error, &offset, nullptr);
  if (!regex->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return Status::error(std::string("cannot compile the GPT-2 regex: ") +
                         reinterpret_cast<const char *>(message));
  }
  // JIT is an optimization only; without it (unsupported CPU) PCRE2
  // interprets the pattern.
  (void)pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE);
  return std::shared_ptr<const Gpt2Regex>(std::move(regex));
}

Status preTokenize(const TokenizerImpl &impl, std::string_view text,
                   std::vector<std::string> &words) {
  switch (impl.preTokenizer.kind) {
  case PreTokenizerKind::Bert:
    splitBert(text, words);
    return Status::success();
  case PreTokenizerKind::ByteLevel:
    return splitByteLevel(impl, text, words);
  case PreTokenizerKind::None:
    break;
  }
  if (!text.empty())
    words.emplace_back(text);
  return Status::success();
}

const std::string &byteToUnicode(unsigned char byte) {
  return byteTable().toUnicode[byte];
}

int byteFromUnicode(char32_t c) {
  const ByteTable &table = byteTable();
  return c < table.fromUnicode.size() ? table.fromUnicode[c] : -1;
}

} // namespace tfc::rt::tok
