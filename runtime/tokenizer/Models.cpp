//===- Models.cpp - BPE and WordPiece -------------------------------------===//
//
// BPE merges the adjacent pair of lowest rank first (the leftmost of equal
// ranks), as Hugging Face does with its priority queue; WordPiece takes the
// longest vocabulary prefix greedily and gives up on the whole word ([UNK])
// when some rest has none.
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/TokenizerImpl.h"
#include "runtime/tokenizer/Unicode.h"

#include <functional>
#include <queue>
#include <tuple>

namespace tfc::rt::tok {

namespace {

/// Limits the vocabulary to ids that fit a dense table comfortably.
constexpr int64_t kMaxTokenId = int64_t(1) << 24;

uint64_t pairKey(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
         static_cast<uint32_t>(right);
}

/// The UTF-8 characters of valid UTF-8 text.
std::vector<std::string> characters(const std::string &word) {
  std::vector<std::string> chars;
  for (size_t i = 0; i < word.size(); ++i) {
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80)
      chars.emplace_back();
    chars.back().push_back(word[i]);
  }
  return chars;
}

/// The initial symbols of a BPE word: one per character (with the
/// continuing-subword prefix and end-of-word suffix where declared).
std::vector<int32_t> bpeSymbols(const Model &model, const std::string &word) {
  const BpeModel &bpe = model.bpe;
  std::vector<std::string> chars = characters(word);
  std::vector<int32_t> symbols;
  bool lastWasUnk = false;
  for (size_t i = 0; i < chars.size(); ++i) {
    std::string piece = (i > 0 ? bpe.continuingPrefix : "") + chars[i];
    if (i + 1 == chars.size())
      piece += bpe.endOfWordSuffix;
    std::optional<int32_t> id = model.vocab.find(piece);
    if (id) {
      symbols.push_back(*id);
      lastWasUnk = false;
    } else if (bpe.unk && !(bpe.fuseUnk && lastWasUnk)) {
      symbols.push_back(*bpe.unk);
      lastWasUnk = true;
    }
  }
  return symbols;
}

void bpeWord(const Model &model, const std::string &word,
             std::vector<int32_t> &ids) {
  const BpeModel &bpe = model.bpe;
  if (bpe.ignoreMerges)
    if (std::optional<int32_t> id = model.vocab.find(word)) {
      ids.push_back(*id);
      return;
    }
  std::vector<int32_t> symbol = bpeSymbols(model, word);
  size_t n = symbol.size();
  std::vector<int64_t> next(n), prev(n);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? int64_t(i + 1) : -1;
    prev[i] = int64_t(i) - 1;
  }
  // (rank, position of the left symbol, left id, right id, merged id);
  // smallest first.
  using Candidate = std::tuple<int32_t, int64_t, int32_t, int32_t, int32_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int64_t left) {
    if (left < 0 || next[left] < 0)
      return;
    auto it = bpe.merges.find(pairKey(symbol[left], symbol[next[left]]));
    if (it != bpe.merges.end())
      queue.emplace(it->second.first, left, symbol[left], symbol[next[left]],
                    it->second.second);
  };
  for (size_t i = 0; i + 1 < n; ++i)
    consider(int64_t(i));
  while (!queue.empty()) {
    auto [rank, left, leftId, rightId, merged] = queue.top();
    queue.pop();
    int64_t right = next[left];
    if (symbol[left] != leftId || right < 0 || symbol[right] != rightId)
      continue; // stale: one side was merged since
    symbol[left] = merged;
    symbol[right] = -1;
    next[left] = next[right];
    if (next[right] >= 0)
      prev[next[right]] = left;
    consider(prev[left]);
    consider(left);
  }
  for (size_t i = 0; i < n; ++i)
    if (symbol[i] >= 0)
      ids.push_back(symbol[i]);
}

void wordPieceWord(const Model &model, const std::string &word,
                   std::vector<int32_t> &ids) {
  const WordPieceModel &wp = model.wordPiece;
  if (countCodePoints(word) > wp.maxInputChars) {
    ids.push_back(wp.unk);
    return;
  }
  std::vector<int32_t> pieces;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    std::optional<int32_t> found;
    while (end > start) {
      std::string piece =
          (start > 0 ? wp.prefix : "") + word.substr(start, end - start);
      if ((found = model.vocab.find(piece)))
        break;
      do // step back one UTF-8 character
        --end;
      while (end > start &&
             (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
    }
    if (!found) {
      ids.push_back(wp.unk);
      return;
    }
    pieces.push_back(*found);
    start = end;
  }
  ids.insert(ids.end(), pieces.begin(), pieces.end());
}

} // namespace

Status Vocab::add(const std::string &token, int64_t id) {
  if (id < 0 || id >= kMaxTokenId)
    return Status::error("token '" + token + "' has id " + std::to_string(id) +
                         ", outside [0, " + std::to_string(kMaxTokenId) + ")");
  if (!ids.emplace(token, static_cast<int32_t>(id)).second)
    return Status::error("token '" + token + "' appears twice");
  auto index = static_cast<size_t>(id);
  if (index >= tokens.size()) {
    tokens.resize(index + 1);
    present.resize(index + 1, false);
  }
  if (present[index])
    return Status::error("id " + std::to_string(id) + " is given to both '" +
                         tokens[index] + "' and '" + token + "'");
  tokens[index] = token;
  present[index] = true;
  return Status::success();
}

std::optional<int32_t> Vocab::find(const std::string &token) const {
  auto it = ids.find(token);
  if (it == ids.end())
    return std::nullopt;
  return it->second;
}

void tokenizeWord(const Model &model, const std::string &word,
                  std::vector<int32_t> &ids) {
  if (word.empty())
    return;
  if (model.kind == ModelKind::Bpe)
    bpeWord(model, word, ids);
  else
    wordPieceWord(model, word, ids);
}

} // namespace tfc::rt::tok
