//===- Unicode.h - UTF-8 and Unicode helpers for the tokenizers -*- C++ -*-===//
//
// The tokenizers work on valid UTF-8 (std::string) and on code points
// (std::u32string). Input bytes that are not valid UTF-8 are replaced first,
// exactly like Python's bytes.decode('utf-8', errors='replace'); everything
// else is ICU (categories, NFD, case mapping).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TOKENIZER_UNICODE_H
#define TFC_RUNTIME_TOKENIZER_UNICODE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace tfc::rt::tok {

/// `bytes` with every ill-formed UTF-8 sequence replaced by U+FFFD, one per
/// maximal subpart (Unicode §3.9 "U+FFFD Substitution of Maximal Subparts",
/// which is what Python's errors='replace' and Rust's from_utf8_lossy do).
std::string sanitizeUtf8(std::string_view bytes);

/// Code points of valid UTF-8 (run sanitizeUtf8 first).
std::u32string toUtf32(std::string_view utf8);
std::string toUtf8(std::u32string_view text);
void appendUtf8(std::string &out, char32_t c);
/// Number of code points in valid UTF-8.
size_t countCodePoints(std::string_view utf8);

/// Canonical decomposition (NFD) by ICU.
std::u32string nfd(std::u32string_view text);
/// The full lower-case mapping of one code point without context (so U+0130
/// becomes "i\u0307" and U+03A3 is always U+03C3), like Rust's
/// char::to_lowercase.
std::u32string lowercase(char32_t c);

/// Unicode White_Space (Rust's char::is_whitespace).
bool isWhiteSpace(char32_t c);

// The category tests below answer as of Unicode 8.0 (a character assigned
// later counts as unassigned), because Hugging Face's BERT normalizer and
// pre-tokenizer use the unicode_categories crate, whose tables are Unicode 8.0.

/// Cc, Cf, Co or Cs.
bool isBertControl(char32_t c);
/// Mn.
bool isBertNonspacingMark(char32_t c);
/// ASCII punctuation or a P* category.
bool isBertPunctuation(char32_t c);
/// The CJK ideograph blocks that BERT surrounds with spaces.
bool isCjkIdeograph(char32_t c);

} // namespace tfc::rt::tok

#endif // TFC_RUNTIME_TOKENIZER_UNICODE_H
