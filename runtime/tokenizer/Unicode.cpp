//===- Unicode.cpp - UTF-8 and Unicode helpers for the tokenizers ---------===//
//
// ICU's C API only: it reports errors through UErrorCode and never throws,
// which suits a runtime built with -fno-exceptions.
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/Unicode.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <vector>

namespace tfc::rt::tok {

namespace {

/// The Unicode version of Hugging Face's category tables (Unicode.h).
constexpr uint8_t kBertUnicodeMajor = 8;

/// The range the second byte of a sequence led by `lead` must fall in; the
/// third and fourth bytes are always 0x80..0xBF (Unicode Table 3-7).
bool secondByteOk(unsigned char lead, unsigned char b) {
  if (lead == 0xE0)
    return b >= 0xA0 && b <= 0xBF;
  if (lead == 0xED)
    return b >= 0x80 && b <= 0x9F;
  if (lead == 0xF0)
    return b >= 0x90 && b <= 0xBF;
  if (lead == 0xF4)
    return b >= 0x80 && b <= 0x8F;
  return b >= 0x80 && b <= 0xBF;
}

/// The length of the sequence led by `lead`, or 0 for a byte that cannot
/// start one.
size_t sequenceLength(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    return 2;
  if (lead >= 0xE0 && lead <= 0xEF)
    return 3;
  if (lead >= 0xF0 && lead <= 0xF4)
    return 4;
  return 0;
}

std::u16string toUtf16(std::u32string_view text) {
  std::u16string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c > 0xFFFF) {
      out.push_back(static_cast<char16_t>(U16_LEAD(c)));
      out.push_back(static_cast<char16_t>(U16_TRAIL(c)));
    } else {
      out.push_back(static_cast<char16_t>(c));
    }
  }
  return out;
}

std::u32string fromUtf16(const char16_t *text, size_t length) {
  std::u32string out;
  out.reserve(length);
  for (size_t i = 0; i < length;) {
    UChar32 c;
    U16_NEXT(text, i, length, c);
    out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

/// Whether `c` was assigned by Unicode 8.0.
bool assignedByUnicode8(char32_t c) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] != 0 && age[0] <= kBertUnicodeMajor;
}

} // namespace

std::string sanitizeUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    auto lead = static_cast<unsigned char>(bytes[i]);
    size_t length = sequenceLength(lead);
    if (length == 1) {
      out.push_back(bytes[i++]);
      continue;
    }
    // Take continuation bytes while they are valid; an incomplete sequence
    // (the maximal subpart) becomes one U+FFFD, a lone bad byte another.
    size_t taken = 1;
    while (length > 0 && taken < length && i + taken < bytes.size()) {
      auto b = static_cast<unsigned char>(bytes[i + taken]);
      bool ok = taken == 1 ? secondByteOk(lead, b) : (b >= 0x80 && b <= 0xBF);
      if (!ok)
        break;
      ++taken;
    }
    if (length > 0 && taken == length)
      out.append(bytes.substr(i, length));
    else
      out.append("\xEF\xBF\xBD");
    i += taken;
  }
  return out;
}

void appendUtf8(std::string &out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::u32string toUtf32(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    auto lead = static_cast<unsigned char>(utf8[i]);
    size_t length = sequenceLength(lead);
    if (length == 0 || i + length > utf8.size()) { // not valid UTF-8
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    char32_t c = length == 1   ? lead
                 : length == 2 ? lead & 0x1F
                 : length == 3 ? lead & 0x0F
                               : lead & 0x07;
    for (size_t k = 1; k < length; ++k)
      c = (c << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    out.push_back(c);
    i += length;
  }
  return out;
}

std::string toUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text)
    appendUtf8(out, c);
  return out;
}

size_t countCodePoints(std::string_view utf8) {
  size_t n = 0;
  for (char c : utf8)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::u32string nfd(std::u32string_view text) {
  UErrorCode error = U_ZERO_ERROR;
  const UNormalizer2 *normalizer = unorm2_getNFDInstance(&error);
  std::u16string source = toUtf16(text);
  if (U_FAILURE(error) || source.empty())
    return std::u32string(text);
  std::vector<UChar> buffer(source.size() * 3 + 16);
  auto capacity = static_cast<int32_t>(buffer.size());
  int32_t length = unorm2_normalize(
      normalizer, reinterpret_cast<const UChar *>(source.data()),
      static_cast<int32_t>(source.size()), buffer.data(), capacity, &error);
  if (error == U_BUFFER_OVERFLOW_ERROR) {
    error = U_ZERO_ERROR;
    buffer.resize(static_cast<size_t>(length));
    length = unorm2_normalize(
        normalizer, reinterpret_cast<const UChar *>(source.data()),
        static_cast<int32_t>(source.size()), buffer.data(), length, &error);
  }
  if (U_FAILURE(error))
    return std::u32string(text);
  return fromUtf16(reinterpret_cast<const char16_t *>(buffer.data()),
                   static_cast<size_t>(length));
}

std::u32string lowercase(char32_t c) {
  if (c < 0x80)
    return std::u32string(1, c >= 'A' && c <= 'Z' ? c + 32 : c);
  std::u16string source = toUtf16(std::u32string_view(&c, 1));
  UChar buffer[16];
  UErrorCode error = U_ZERO_ERROR;
  int32_t length =
      u_strToLower(buffer, 16, reinterpret_cast<const UChar *>(source.data()),
                   static_cast<int32_t>(source.size()), "", &error);
  if (U_FAILURE(error))
    return std::u32string(1, c);
  return fromUtf16(reinterpret_cast<const char16_t *>(buffer),
                   static_cast<size_t>(length));
}

bool isWhiteSpace(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool isBertControl(char32_t c) {
  int8_t type = u_charType(static_cast<UChar32>(c));
  bool control = type == U_CONTROL_CHAR || type == U_FORMAT_CHAR ||
                 type == U_PRIVATE_USE_CHAR || type == U_SURROGATE;
  return control && assignedByUnicode8(c);
}

bool isBertNonspacingMark(char32_t c) {
  return u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK &&
         assignedByUnicode8(c);
}

bool isBertPunctuation(char32_t c) {
  if (c < 0x80)
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
           (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return u_ispunct(static_cast<UChar32>(c)) && assignedByUnicode8(c);
}

bool isCjkIdeograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

} // namespace tfc::rt::tok
