//===- Safetensors.cpp - Reading and writing .safetensors files -----------===//
//
// nlohmann::json is used without exceptions throughout: parsing goes through
// the SAX interface (which reports errors as values) and the DOM is only
// inspected with type checks before each access, never with at()/get<>() on
// an unchecked value. This keeps the reader safe for -fno-exceptions callers,
// where a throw inside nlohmann would turn into std::abort.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"

#include "runtime/FileWriter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the tfc runtime assumes a little-endian host (as safetensors does)"
#endif

namespace tfc::rt {

using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// dtype names
//===----------------------------------------------------------------------===//

const char *safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I16:
    return "I16";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

static bool parseSafetensorsDType(const std::string &s, DType &out) {
  static const DType all[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                              DType::I64, DType::I32, DType::I16,  DType::I8,
                              DType::U8,  DType::Bool};
  for (DType d : all) {
    if (s == safetensorsDTypeName(d)) {
      out = d;
      return true;
    }
  }
  return false;
}

/// Dtypes of the safetensors specification that tfc does not handle. They get
/// a different message from typos ("unsupported" vs "unknown") so the user
/// knows the file is fine but needs converting.
static bool isKnownUnsupportedDType(const std::string &s) {
  static const char *const names[] = {
      "U16",     "U32",     "U64",     "F8_E4M3", "F8_E5M2",
      "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",      "C64"};
  for (const char *n : names)
    if (s == n)
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Header pre-pass
//===----------------------------------------------------------------------===//

namespace {
/// A SAX handler that builds nothing. It runs before the DOM parse to catch
/// what the DOM parse cannot report (or cannot survive):
///   - the parser's error message and position (the exception-free DOM parse
///     only says "discarded"),
///   - repeated keys, which the DOM silently collapses ("last one wins"
///     would let two different tensors hide behind one name),
///   - absurd nesting, which would make later recursive code (json::dump,
///     destructors in older nlohmann versions) overflow the stack.
class HeaderChecker : public nlohmann::json_sax<json> {
public:
  static constexpr size_t kMaxDepth = 64;

  std::string error;
  /// True when `error` is a JSON syntax error (rather than valid JSON that
  /// tfc refuses).
  bool syntaxError = false;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }

  bool start_object(std::size_t) override {
    keys.emplace_back();
    return push();
  }
  bool key(string_t &k) override {
    if (keys.size() == 1)
      topKey = k;
    if (!keys.back().insert(k).second) {
      error = "has a duplicate key '" + k + "'";
      if (keys.size() > 1)
        error += " in the entry of tensor '" + topKey + "'";
      return false;
    }
    return true;
  }
  bool end_object() override {
    keys.pop_back();
    --depth;
    return true;
  }
  bool start_array(std::size_t) override {
    // Arrays have no keys (so nothing goes on `keys`, which tracks objects
    // only) but still count towards the depth.
    return push();
  }
  bool end_array() override {
    --depth;
    return true;
  }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    // what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 5: syntax error ..."; drop the bracketed id, keep the rest.
    std::string msg = ex.what();
    size_t close = msg.find("] ");
    if (msg.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      msg = msg.substr(close + 2);
    error = msg;
    syntaxError = true;
    return false;
  }

private:
  bool push() {
    if (++depth > kMaxDepth) {
      error = "is nested deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    return true;
  }

  size_t depth = 0;
  std::vector<std::set<std::string>> keys;
  std::string topKey;
};
} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

Expected<SafetensorsFile> SafetensorsFile::open(const std::string &path) {
  Expected<FileReader> reader = FileReader::open(path);
  if (!reader)
    return reader.status();
  SafetensorsFile st;
  st.name = path;
  TFC_RT_RETURN_IF_ERROR(st.readTensors(*reader));
  return st;
}

Expected<SafetensorsFile>
SafetensorsFile::fromBytes(std::vector<uint8_t> bytes,
                           const std::string &displayName) {
  return fromMappedFile(MappedFile::fromBytes(std::move(bytes), displayName));
}

Expected<SafetensorsFile>
SafetensorsFile::fromMappedFile(std::shared_ptr<MappedFile> file) {
  if (!file)
    return Status::error("no file to read safetensors from");
  SafetensorsFile st;
  st.name = file->path();
  TFC_RT_RETURN_IF_ERROR(st.viewTensors(file));
  return st;
}

/// Reads a non-negative JSON integer that fits in uint64_t. Floats (even
/// integral ones such as 2.0), negative numbers, and other types are refused
/// with a description of what was found.
static bool readUnsigned(const json &v, uint64_t &out, std::string &found) {
  if (v.is_number_unsigned()) {
    out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer())
    found = "negative number " + std::to_string(v.get<int64_t>());
  else if (v.is_number_float())
    found = "non-integer number";
  else
    found = std::string("a JSON ") + v.type_name();
  return false;
}

/// The header length that the file's first min(fileSize, 8) bytes give,
/// checked against the file's size.
static Expected<uint64_t> readHeaderLength(const uint8_t *prefix,
                                           uint64_t fileSize) {
  if (fileSize < 8)
    return Status::error("file is too short to be a safetensors file (" +
                         std::to_string(fileSize) +
                         " bytes; the header length alone takes 8)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i) // Little-endian regardless of host.
    headerLen = (headerLen << 8) | prefix[i];
  if (headerLen > kMaxSafetensorsHeaderSize)
    return Status::error("header length " + std::to_string(headerLen) +
                         " is absurd (limit " +
                         std::to_string(kMaxSafetensorsHeaderSize) +
                         " bytes); the file is corrupt or not safetensors");
  if (headerLen > fileSize - 8)
    return Status::error("header length " + std::to_string(headerLen) +
                         " exceeds the file size (" + std::to_string(fileSize) +
                         " bytes); the file is truncated or not safetensors");
  return headerLen;
}

/// The JSON header [hbegin, hend) into `header` (an object, checked for
/// depth and duplicate keys by HeaderChecker).
static Status readHeaderObject(const char *hbegin, const char *hend,
                               json &header) {
  HeaderChecker checker;
  if (!json::sax_parse(hbegin, hend, &checker)) {
    if (checker.syntaxError || checker.error.empty())
      return Status::error(
          "header is not valid JSON: " +
          (checker.error.empty() ? std::string("malformed") : checker.error));
    return Status::error("header " + checker.error);
  }
  header = json::parse(hbegin, hend, /*cb=*/nullptr,
                       /*allow_exceptions=*/false);
  if (header.is_discarded()) // Not expected after the SAX pass; be safe.
    return Status::error("header is not valid JSON");
  if (!header.is_object())
    return Status::error(std::string("header is not a JSON object (found a ") +
                         header.type_name() + ")");
  return Status::success();
}

/// The `__metadata__` entry: an object of strings.
static Status readMetadata(const json &value,
                           std::map<std::string, std::string> &meta) {
  if (!value.is_object())
    return Status::error("'__metadata__' must be an object of strings "
                         "(found a " +
                         std::string(value.type_name()) + ")");
  for (auto m = value.begin(); m != value.end(); ++m) {
    if (!m.value().is_string())
      return Status::error("'__metadata__' entry '" + m.key() +
                           "' must be a string (found a " +
                           std::string(m.value().type_name()) + ")");
    meta[m.key()] = m.value().get_ref<const std::string &>();
  }
  return Status::success();
}

/// The `dtype` field of a tensor entry, into `e.dtype`.
static Status readEntryDType(const json &value, SafetensorsEntry &e) {
  auto dt = value.find("dtype");
  if (dt == value.end())
    return Status::error("missing field 'dtype'");
  if (!dt->is_string())
    return Status::error(
        std::string("field 'dtype' must be a string (found a ") +
        dt->type_name() + ")");
  const std::string &dtName = dt->get_ref<const std::string &>();
  if (!parseSafetensorsDType(dtName, e.dtype)) {
    if (isKnownUnsupportedDType(dtName))
      return Status::error("unsupported dtype '" + dtName + "'");
    return Status::error("unknown dtype '" + dtName + "'");
  }
  return Status::success();
}

/// The `shape` field of a tensor entry, into `e.shape`; `bytes` is the size
/// of the tensor's data that shape and dtype imply.
static Status readEntryShape(const json &value, SafetensorsEntry &e,
                             uint64_t &bytes) {
  auto sh = value.find("shape");
  if (sh == value.end())
    return Status::error("missing field 'shape'");
  if (!sh->is_array())
    return Status::error(
        std::string("field 'shape' must be an array (found a ") +
        sh->type_name() + ")");
  uint64_t numElements = 1;
  bool overflow = false;
  for (const json &d : *sh) {
    uint64_t dim;
    std::string found;
    if (!readUnsigned(d, dim, found))
      return Status::error(
          "field 'shape' must hold non-negative integers (found " + found +
          ")");
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return Status::error("dimension " + std::to_string(dim) +
                           " is too large");
    e.shape.push_back(static_cast<int64_t>(dim));
    if (dim != 0 && numElements > std::numeric_limits<uint64_t>::max() / dim)
      overflow = true;
    else
      numElements *= dim;
  }
  // A zero dimension anywhere makes the tensor empty, even after an
  // "overflow" among the others.
  if (std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end()) {
    numElements = 0;
    overflow = false;
  }
  uint64_t elemSize = dtypeSize(e.dtype);
  if (overflow ||
      numElements > std::numeric_limits<uint64_t>::max() / elemSize ||
      numElements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return Status::error("shape " + shapeToString(e.shape) +
                         " overflows the element count");
  bytes = numElements * elemSize;
  return Status::success();
}

/// The `data_offsets` field of a tensor entry, into `e.begin`/`e.end`:
/// inside the data section (`dataSize` bytes) and `bytes` long.
static Status readEntryOffsets(const json &value, uint64_t dataSize,
                               uint64_t bytes, SafetensorsEntry &e) {
  auto off = value.find("data_offsets");
  if (off == value.end())
    return Status::error("missing field 'data_offsets'");
  if (!off->is_array() || off->size() != 2)
    return Status::error("field 'data_offsets' must be an array [begin, end]");
  std::string found;
  if (!readUnsigned((*off)[0], e.begin, found) ||
      !readUnsigned((*off)[1], e.end, found))
    return Status::error("field 'data_offsets' must hold non-negative "
                         "integers (found " +
                         found + ")");
  std::string range =
      "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
  if (e.begin > e.end)
    return Status::error("data_offsets " + range + " have begin > end");
  if (e.end > dataSize)
    return Status::error("data_offsets " + range +
                         " lie outside the data section (" +
                         std::to_string(dataSize) + " bytes)");
  if (e.end - e.begin != bytes)
    return Status::error("data_offsets " + range + " span " +
                         std::to_string(e.end - e.begin) + " bytes, but " +
                         typeToString(e.dtype, e.shape) + " needs " +
                         std::to_string(bytes));
  return Status::success();
}

/// One tensor entry of the header; errors name the tensor.
static Status readEntry(const std::string &name, const json &value,
                        uint64_t dataSize, SafetensorsEntry &e) {
  auto fail = [&](const std::string &msg) {
    return Status::error("tensor '" + name + "': " + msg);
  };
  if (!value.is_object())
    return fail(std::string("entry must be an object (found a ") +
                value.type_name() + ")");
  e.name = name;
  uint64_t bytes = 0;
  Status s = readEntryDType(value, e);
  if (s.ok())
    s = readEntryShape(value, e, bytes);
  if (s.ok())
    s = readEntryOffsets(value, dataSize, bytes, e);
  if (!s.ok())
    return fail(s.message());
  return Status::success();
}

/// Fails if two tensors' byte ranges overlap: sorts them and compares
/// neighbours. Empty tensors occupy no bytes and cannot overlap anything.
static Status
checkNoOverlap(const std::map<std::string, SafetensorsEntry> &entries) {
  std::vector<const SafetensorsEntry *> byOffset;
  for (const auto &kv : entries)
    if (kv.second.end > kv.second.begin)
      byOffset.push_back(&kv.second);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
              return a->begin < b->begin ||
                     (a->begin == b->begin && a->name < b->name);
            });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const SafetensorsEntry *a = byOffset[i - 1], *b = byOffset[i];
    if (b->begin < a->end)
      return Status::error("tensors '" + a->name + "' [" +
                           std::to_string(a->begin) + ", " +
                           std::to_string(a->end) + ") and '" + b->name +
                           "' [" + std::to_string(b->begin) + ", " +
                           std::to_string(b->end) + ") overlap");
  }
  return Status::success();
}

Status SafetensorsFile::parseHeader(const char *header, uint64_t headerLen,
                                    uint64_t fileSize) {
  json object;
  TFC_RT_RETURN_IF_ERROR(readHeaderObject(header, header + headerLen, object));
  dataStart = 8 + headerLen;
  const uint64_t dataSize = fileSize - dataStart;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == "__metadata__") {
      TFC_RT_RETURN_IF_ERROR(readMetadata(it.value(), meta));
      continue;
    }
    SafetensorsEntry e;
    TFC_RT_RETURN_IF_ERROR(readEntry(it.key(), it.value(), dataSize, e));
    entries.emplace(it.key(), std::move(e));
  }
  return checkNoOverlap(entries);
}

/// Reads the header, then each tensor into an owned block of its own, in
/// the file's order; and refuses a file that changed meanwhile.
Status SafetensorsFile::readTensors(const FileReader &reader) {
  uint8_t prefix[8];
  TFC_RT_RETURN_IF_ERROR(
      reader.read(0, prefix, std::min<uint64_t>(reader.size(), 8)));
  Expected<uint64_t> headerLen = readHeaderLength(prefix, reader.size());
  if (!headerLen)
    return headerLen.status().withContext(name);
  std::string header(static_cast<size_t>(*headerLen), '\0');
  TFC_RT_RETURN_IF_ERROR(reader.read(8, header.data(), header.size()));
  TFC_RT_RETURN_IF_ERROR(
      parseHeader(header.data(), *headerLen, reader.size()).withContext(name));
  std::vector<const SafetensorsEntry *> inFileOrder;
  for (const auto &kv : entries)
    inFileOrder.push_back(&kv.second);
  std::sort(inFileOrder.begin(), inFileOrder.end(),
            [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
              return a->begin < b->begin;
            });
  for (const SafetensorsEntry *e : inFileOrder) {
    Expected<Tensor> t = Tensor::allocate(e->dtype, e->shape);
    if (!t)
      return t.status().withContext(name + ": tensor '" + e->name + "'");
    TFC_RT_RETURN_IF_ERROR(reader.read(dataStart + e->begin, t->data(),
                                       static_cast<size_t>(e->end - e->begin)));
    tensors.emplace(e->name, t.take());
  }
  return reader.checkUnchanged();
}

/// Parses the header of bytes in memory and makes each tensor a view of
/// them, or a copy where they are not aligned for its dtype (a hand-made
/// file whose header length is not a multiple of 8) or empty.
Status SafetensorsFile::viewTensors(const std::shared_ptr<MappedFile> &file) {
  Expected<uint64_t> headerLen = readHeaderLength(file->data(), file->size());
  if (!headerLen)
    return headerLen.status().withContext(name);
  const char *header = reinterpret_cast<const char *>(file->data()) + 8;
  TFC_RT_RETURN_IF_ERROR(
      parseHeader(header, *headerLen, file->size()).withContext(name));
  for (const auto &kv : entries) {
    const SafetensorsEntry &e = kv.second;
    uint8_t *p = file->data() + dataStart + e.begin;
    bool view = e.end > e.begin &&
                reinterpret_cast<uintptr_t>(p) % dtypeSize(e.dtype) == 0;
    Expected<Tensor> t =
        view ? Tensor::borrow(e.dtype, e.shape, p,
                              std::shared_ptr<const void>(file, file.get()))
             : Tensor::allocate(e.dtype, e.shape);
    if (!t)
      return t.status().withContext(name + ": tensor '" + e.name + "'");
    if (!view && e.end > e.begin)
      std::memcpy(t->data(), p, e.end - e.begin);
    tensors.emplace(e.name, t.take());
  }
  return Status::success();
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto &kv : entries)
    out.push_back(kv.first);
  return out;
}

const SafetensorsEntry *SafetensorsFile::find(const std::string &name) const {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

Expected<Tensor> SafetensorsFile::tensor(const std::string &name) const {
  const SafetensorsEntry *e = find(name);
  if (!e)
    return Status::error(path() + ": no tensor named '" + name + "'");
  return tensors.find(name)->second;
}

Expected<Tensor> SafetensorsFile::loadF32(const std::string &name) const {
  const SafetensorsEntry *e = find(name);
  if (!e)
    return Status::error(path() + ": no tensor named '" + name + "'");
  if (!isFloatingPoint(e->dtype))
    return Status::error(path() + ": tensor '" + name + "' has dtype " +
                         safetensorsDTypeName(e->dtype) +
                         ", which cannot be loaded as f32");
  const Tensor &stored = tensors.find(name)->second;
  if (e->dtype == DType::F32)
    return stored;
  Expected<Tensor> out = Tensor::allocate(DType::F32, e->shape);
  if (!out)
    return out.status().withContext(path() + ": tensor '" + name + "'");
  const void *src = stored.data();
  Status s = convertToF32(e->dtype, src, out->dataAs<float>(),
                          static_cast<size_t>(out->numElements()));
  if (!s.ok())
    return s.withContext(path() + ": tensor '" + name + "'");
  return out;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Strict UTF-8 check (no overlongs, surrogates or code points past
/// U+10FFFF). Names and metadata must be valid UTF-8 for the JSON header to
/// be readable by other implementations.
static bool isValidUtf8(const std::string &s) {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n)
      return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static const uint32_t minForLen[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

/// JSON string literal for a (valid UTF-8) string.
static std::string quote(const std::string &s) {
  return json(s).dump(-1, ' ', /*ensure_ascii=*/false,
                      json::error_handler_t::replace);
}

/// Position of a dtype in the data section. The reference writer sorts by
/// its Dtype enum, descending, then by name; mirroring that makes our files
/// byte-identical to `safetensors.numpy.save` (checked in the unit tests) and
/// puts wider elements first, so every tensor is naturally aligned.
static int writeRank(DType dtype) {
  switch (dtype) {
  case DType::I64:
    return 0;
  case DType::F64:
    return 1;
  case DType::F32:
    return 2;
  case DType::I32:
    return 3;
  case DType::BF16:
    return 4;
  case DType::F16:
    return 5;
  case DType::I16:
    return 6;
  case DType::I8:
    return 7;
  case DType::U8:
    return 8;
  case DType::Bool:
    return 9;
  }
  return 10;
}

namespace {
/// Everything needed to write a file: the 8-byte length plus padded header,
/// and the tensors in data order.
struct SafetensorsLayout {
  std::string prefix;
  std::vector<const Tensor *> order;
};
} // namespace

static Expected<SafetensorsLayout>
planSafetensors(const std::map<std::string, Tensor> &tensors,
                const std::map<std::string, std::string> &metadata) {
  std::vector<std::pair<const std::string *, const Tensor *>> items;
  for (const auto &kv : tensors) {
    const std::string &name = kv.first;
    if (name.empty())
      return Status::error("tensor names must not be empty");
    if (name == "__metadata__")
      return Status::error("'__metadata__' is reserved and cannot name a "
                           "tensor");
    if (!isValidUtf8(name))
      return Status::error("tensor name '" + name + "' is not valid UTF-8");
    if (kv.second.isNull())
      return Status::error("tensor '" + name + "' is null");
    items.emplace_back(&name, &kv.second);
  }
  for (const auto &kv : metadata)
    if (!isValidUtf8(kv.first) || !isValidUtf8(kv.second))
      return Status::error("metadata entry '" + kv.first +
                           "' is not valid UTF-8");

  // The reference order (std::stable_sort keeps the map's name order within
  // one dtype).
  std::stable_sort(
      items.begin(), items.end(), [](const auto &a, const auto &b) {
        return writeRank(a.second->dtype()) < writeRank(b.second->dtype());
      });

  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool firstMeta = true;
    for (const auto &kv : metadata) {
      if (!firstMeta)
        header += ",";
      firstMeta = false;
      header += quote(kv.first) + ":" + quote(kv.second);
    }
    header += "}";
    first = false;
  }
  SafetensorsLayout layout;
  uint64_t offset = 0;
  for (const auto &item : items) {
    const Tensor &t = *item.second;
    if (!first)
      header += ",";
    first = false;
    header += quote(*item.first) + ":{\"dtype\":\"" +
              safetensorsDTypeName(t.dtype()) + "\",\"shape\":[";
    for (size_t i = 0; i < t.rank(); ++i) {
      if (i)
        header += ",";
      header += std::to_string(t.dim(i));
    }
    uint64_t end = offset + t.byteSize();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(end) + "]}";
    offset = end;
    layout.order.push_back(&t);
  }
  header += "}";
  // Pad with spaces (valid JSON whitespace) so the data section starts at a
  // multiple of 8 bytes, as the reference implementation does.
  header.append((8 - header.size() % 8) % 8, ' ');

  uint64_t n = header.size();
  layout.prefix.resize(8);
  for (int i = 0; i < 8; ++i)
    layout.prefix[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  layout.prefix += header;
  return layout;
}

Expected<std::vector<uint8_t>>
serializeSafetensors(const std::map<std::string, Tensor> &tensors,
                     const std::map<std::string, std::string> &metadata) {
  Expected<SafetensorsLayout> layout = planSafetensors(tensors, metadata);
  if (!layout)
    return layout.status();
  std::vector<uint8_t> out(layout->prefix.begin(), layout->prefix.end());
  for (const Tensor *t : layout->order) {
    const auto *p = static_cast<const uint8_t *>(t->data());
    out.insert(out.end(), p, p + t->byteSize());
  }
  return out;
}

Status writeSafetensors(const std::string &path,
                        const std::map<std::string, Tensor> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  Expected<SafetensorsLayout> layout = planSafetensors(tensors, metadata);
  if (!layout)
    return layout.status().withContext("cannot write '" + path + "'");
  Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
  if (!w)
    return w.status();
  TFC_RT_RETURN_IF_ERROR(
      w->write(layout->prefix.data(), layout->prefix.size()));
  for (const Tensor *t : layout->order)
    TFC_RT_RETURN_IF_ERROR(w->write(t->data(), t->byteSize()));
  return w->commit();
}

} // namespace tfc::rt
