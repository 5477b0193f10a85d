//===- Normalizer.cpp - BertNormalizer ------------------------------------===//
//
// The stages of Hugging Face's BertNormalizer, in its order: clean text (drop
// NUL, U+FFFD and control characters, turn whitespace into ' '), put spaces
// around CJK ideographs, strip accents (NFD, then drop nonspacing marks) and
// lower-case each character.
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/TokenizerImpl.h"
#include "runtime/tokenizer/Unicode.h"

namespace tfc::rt::tok {

namespace {

std::u32string cleanText(const std::u32string &text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    // Control characters go first, so of the White_Space ones only tab,
    // newline and carriage return (not Cc for BERT) become spaces.
    bool tabOrNewline = c == '\t' || c == '\n' || c == '\r';
    if (c == 0 || c == 0xFFFD || (!tabOrNewline && isBertControl(c)))
      continue;
    out.push_back(tabOrNewline || isWhiteSpace(c) ? U' ' : c);
  }
  return out;
}

std::u32string spaceCjk(const std::u32string &text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (isCjkIdeograph(c)) {
      out.push_back(' ');
      out.push_back(c);
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::u32string stripAccents(const std::u32string &text) {
  std::u32string decomposed = nfd(text);
  std::u32string out;
  out.reserve(decomposed.size());
  for (char32_t c : decomposed)
    if (!isBertNonspacingMark(c))
      out.push_back(c);
  return out;
}

std::u32string lowercaseAll(const std::u32string &text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text)
    out += lowercase(c);
  return out;
}

} // namespace

std::string normalize(const Normalizer &normalizer, std::string_view text) {
  if (!normalizer.present)
    return std::string(text);
  std::u32string chars = toUtf32(text);
  if (normalizer.cleanText)
    chars = cleanText(chars);
  if (normalizer.handleChineseChars)
    chars = spaceCjk(chars);
  if (normalizer.stripAccents)
    chars = stripAccents(chars);
  if (normalizer.lowercase)
    chars = lowercaseAll(chars);
  return toUtf8(chars);
}

} // namespace tfc::rt::tok
