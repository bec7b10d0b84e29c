#include "minigrad/tensor/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "minigrad/tensor/file_io.h"

namespace minigrad {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; minigrad copies it as is");

namespace {

using json = nlohmann::json;

// The reference implementation's limit: a header this big is an attack or a mistake.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeCode {
  const char* code;
  size_t bytes;
  bool supported;  // whether minigrad has a matching dtype
  DType dtype;
};

// Every dtype the format defines; minigrad reads and writes the four it has.
constexpr DTypeCode kCodes[] = {
    {"F64", 8, true, DType::Float64},      {"F32", 4, true, DType::Float32},
    {"I64", 8, true, DType::Int64},        {"BOOL", 1, true, DType::Bool},
    {"F16", 2, false, DType::Float32},     {"BF16", 2, false, DType::Float32},
    {"I32", 4, false, DType::Float32},     {"I16", 2, false, DType::Float32},
    {"I8", 1, false, DType::Float32},      {"U64", 8, false, DType::Float32},
    {"U32", 4, false, DType::Float32},     {"U16", 2, false, DType::Float32},
    {"U8", 1, false, DType::Float32},      {"F8_E4M3", 1, false, DType::Float32},
    {"F8_E5M2", 1, false, DType::Float32},
};

const DTypeCode* find_code(std::string_view code) {
  for (const DTypeCode& c : kCodes) {
    if (code == c.code) return &c;
  }
  return nullptr;
}

const char* code_of(DType dtype) {
  for (const DTypeCode& c : kCodes) {
    if (c.supported && c.dtype == dtype) return c.code;
  }
  return "?";
}

// One tensor's entry in the header, validated.
struct Entry {
  std::string name;
  const DTypeCode* code;
  Shape shape;
  uint64_t begin, end;
};

[[noreturn]] void reject(const std::string& source, const std::string& problem) {
  throw Error("load_safetensors", source + ": " + problem);
}

// Builds the header's JSON value, refusing what nlohmann's own parser would let through: a key that
// appears twice in one object (at any level: two tensors of one name, or a tensor entry that names its
// dtype twice) and nesting deeper than the format's three levels ({"name": {"shape": [2, 3]}}). The
// values are built as they are read, so parsing takes time linear in the header's size. (nlohmann's
// parse() with a callback, which this replaces, rescans the parent object at the end of every nested
// one: quadratic in the number of tensors.)
class HeaderBuilder : public nlohmann::json_sax<json> {
 public:
  static constexpr size_t kMaxDepth = 3;

  json root;
  std::string error;  // set when parsing stopped early

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool value) override { return add(json(value)); }
  bool number_integer(number_integer_t value) override { return add(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return add(json(value)); }
  bool number_float(number_float_t value, const string_t&) override { return add(json(value)); }
  bool string(string_t& value) override { return add(json(std::move(value))); }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    if (stack_.back()->contains(key)) return fail("the key '" + key + "' appears twice in one object");
    key_ = std::move(key);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail(std::string("the header is not valid JSON: ") + e.what());
  }

 private:
  bool fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }
  // Puts `value` where the parser is: the root, the next element of an array, or the last key's value.
  json* place(json value) {
    if (stack_.empty()) {
      root = std::move(value);
      return &root;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    return &(parent[key_] = std::move(value));
  }
  bool add(json value) {
    place(std::move(value));
    return true;
  }
  bool open(json container) {
    if (stack_.size() == kMaxDepth) return fail("the header nests deeper than the format's three levels");
    stack_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<json*> stack_;  // the open objects and arrays, innermost last
  std::string key_;
};

Entry parse_entry(const std::string& source, const std::string& name, const json& info) {
  const std::string where = "tensor '" + name + "'";
  if (!info.is_object()) reject(source, where + ": its header entry is not an object");
  for (const auto& [key, value] : info.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      reject(source, where + ": unknown field '" + key + "'");
  }
  if (!info.contains("dtype") || !info["dtype"].is_string())
    reject(source, where + ": missing or non-string dtype");
  const std::string code = info["dtype"].get<std::string>();
  Entry entry{name, find_code(code), {}, 0, 0};
  if (!entry.code) reject(source, where + ": unknown dtype '" + code + "'");
  if (!entry.code->supported) reject(source, where + ": dtype " + code + " is not supported by minigrad");

  if (!info.contains("shape") || !info["shape"].is_array())
    reject(source, where + ": missing or non-array shape");
  const json& shape = info["shape"];
  if (shape.size() > static_cast<size_t>(Shape::kMaxRank)) {
    reject(source, where + ": " + std::to_string(shape.size()) + " dimensions; minigrad supports at most " +
                       std::to_string(Shape::kMaxRank));
  }
  for (const json& size : shape) {
    if (!size.is_number_unsigned()) reject(source, where + ": shape entries must be non-negative integers");
    const uint64_t s = size.get<uint64_t>();
    if (s > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      reject(source, where + ": its shape overflows");
    entry.shape.push_back(static_cast<int64_t>(s));
  }
  // The same test every tensor's shape passes (no count, stride or byte size past 64 bits), named here.
  int64_t numel = 0;
  try {
    numel = checked_numel("load_safetensors", entry.shape, static_cast<int64_t>(entry.code->bytes));
  } catch (const ShapeError& e) {
    reject(source, where + ": " + e.detail());
  }
  const uint64_t bytes = static_cast<uint64_t>(numel) * entry.code->bytes;

  const json& offsets = info.contains("data_offsets") ? info["data_offsets"] : json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    reject(source, where + ": data_offsets must be two non-negative integers");
  }
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.end < entry.begin) reject(source, where + ": data_offsets end before they begin");
  if (entry.end - entry.begin != bytes) {
    reject(source, where + ": data_offsets cover " + std::to_string(entry.end - entry.begin) + " bytes but " +
                       code + " " + entry.shape.str() + " needs " + std::to_string(bytes));
  }
  return entry;
}

// What the header says: the metadata, and the tensors' entries sorted by where their data begins.
struct Header {
  std::map<std::string, std::string> metadata;
  std::vector<Entry> entries;
};

// Reads the 8-byte length at the start of a file of `file_bytes` bytes; returns the header's length.
uint64_t check_header_length(const std::string& source, const char (&prefix)[8], uint64_t file_bytes) {
  if (file_bytes < 8) reject(source, "only " + std::to_string(file_bytes) + " bytes, too short for a header");
  uint64_t header_bytes;
  std::memcpy(&header_bytes, prefix, 8);
  // A length that large made of printable characters is the start of a text file (a JSON or CSV file
  // passed by mistake): say so, rather than quote a length of 8 quintillion bytes.
  const bool text =
      std::all_of(prefix, prefix + 8, [](char c) { return c == '\n' || c == '\t' || (c >= 32 && c < 127); });
  if (text && header_bytes > file_bytes - 8) {
    std::string shown;  // the 8 characters, with line breaks and tabs written as \n and \t
    for (char c : std::string_view(prefix, 8))
      shown += c == '\n' ? "\\n" : c == '\t' ? "\\t" : std::string(1, c);
    reject(source, "not a safetensors file: it begins with the text \"" + shown +
                       "\", where a safetensors file begins with its header's length in 8 bytes");
  }
  if (header_bytes > kMaxHeaderBytes) {
    reject(source, "header length " + std::to_string(header_bytes) + " exceeds the limit of " +
                       std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_bytes > file_bytes - 8) {
    reject(source, "header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
                       std::to_string(file_bytes) + " bytes)");
  }
  return header_bytes;
}

// Parses and validates the header of a file whose data section holds `data_bytes` bytes.
Header parse_header(const std::string& source, std::string_view text, uint64_t data_bytes) {
  if (text.empty() || text.front() != '{') reject(source, "the header does not start with '{'");
  HeaderBuilder builder;  // nlohmann's parser checks UTF-8
  if (!json::sax_parse(text.begin(), text.end(), &builder) || !builder.error.empty()) {
    reject(source, builder.error.empty() ? "the header is not valid JSON" : builder.error);
  }
  if (!builder.root.is_object()) reject(source, "the header is not a JSON object");

  Header header;
  for (const auto& [name, info] : builder.root.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) reject(source, "__metadata__ is not an object");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) reject(source, "__metadata__ value for '" + key + "' is not a string");
        header.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    header.entries.push_back(parse_entry(source, name, info));
  }

  // The tensors' byte ranges, in order, must tile the data section exactly.
  std::sort(header.entries.begin(), header.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const Entry& e : header.entries) {
    if (e.begin != expected) {
      reject(source, "tensor '" + e.name + "' starts at byte " + std::to_string(e.begin) +
                         " of the data, expected " + std::to_string(expected) +
                         (e.begin < expected ? " (it overlaps the previous one)" : " (a gap)"));
    }
    expected = e.end;
  }
  if (expected != data_bytes) {
    reject(source, "the tensors cover " + std::to_string(expected) + " bytes of data but the file holds " +
                       std::to_string(data_bytes));
  }
  return header;
}

// A tensor for an entry, its bytes filled in by `read(destination, count)`.
template <typename Read>
Tensor make_tensor(const std::string& source, const Entry& e, Read&& read) {
  Tensor t;
  try {
    t = Tensor::empty(e.shape, e.code->dtype);
  } catch (const Error& error) {
    reject(source, "tensor '" + e.name + "': " + error.detail());
  }
  read(t.storage()->data(), e.end - e.begin);
  if (e.code->dtype == DType::Bool) {
    // A C++ bool must be 0 or 1; any other byte would be undefined behaviour when read.
    const auto* b = static_cast<const uint8_t*>(t.storage()->data());
    for (uint64_t i = 0; i < e.end - e.begin; ++i) {
      if (b[i] > 1)
        reject(source, "tensor '" + e.name + "': BOOL byte " + std::to_string(b[i]) + " is not 0 or 1");
    }
  }
  return t;
}

}  // namespace

const Tensor* SafetensorsFile::find(std::string_view name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  return nullptr;
}

const Tensor& SafetensorsFile::at(std::string_view name) const {
  if (const Tensor* t = find(name)) return *t;
  std::string names;
  for (size_t i = 0; i < tensors.size() && i < 5; ++i) names += (i ? ", " : "") + tensors[i].first;
  if (tensors.size() > 5) names += ", ... (" + std::to_string(tensors.size()) + " in all)";
  throw IndexError("SafetensorsFile::at", (source.empty() ? "" : source + ": ") + "no tensor named '" +
                                              std::string(name) + "'" +
                                              (tensors.empty() ? " (it holds none)" : "; it holds " + names));
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source) {
  char prefix[8] = {};
  std::memcpy(prefix, bytes.data(), std::min<size_t>(8, bytes.size()));
  const uint64_t header_bytes = check_header_length(source, prefix, bytes.size());
  const uint64_t data_start = 8 + header_bytes;
  const Header header = parse_header(source, bytes.substr(8, header_bytes), bytes.size() - data_start);
  SafetensorsFile file{.tensors = {}, .metadata = header.metadata, .source = source};
  for (const Entry& e : header.entries) {
    file.tensors.emplace_back(e.name, make_tensor(source, e, [&](void* out, uint64_t count) {
                                std::memcpy(out, bytes.data() + data_start + e.begin, count);
                              }));
  }
  return file;
}

SafetensorsFile load_safetensors(const std::string& path) {
  // The length and the header first, checked against the file's size; then only the data they declare.
  const ReadableFile in("load_safetensors", path);
  char prefix[8] = {};
  if (in.size() >= 8) in.read_at(0, prefix, 8);
  const uint64_t header_bytes = check_header_length(path, prefix, in.size());
  std::string text(header_bytes, '\0');
  in.read_at(8, text.data(), header_bytes);
  const uint64_t data_start = 8 + header_bytes;
  const Header header = parse_header(path, text, in.size() - data_start);
  SafetensorsFile file{.tensors = {}, .metadata = header.metadata, .source = path};
  for (const Entry& e : header.entries) {
    file.tensors.emplace_back(e.name, make_tensor(path, e, [&](void* out, uint64_t count) {
                                in.read_at(data_start + e.begin, out, count);
                              }));
  }
  return file;
}

std::string serialize_safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                  const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  std::vector<Tensor> contiguous;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") throw ValueError("save_safetensors", "'__metadata__' cannot name a tensor");
    if (!names.insert(name).second)
      throw ValueError("save_safetensors", "the name '" + name + "' is used twice");
    if (!t.defined()) throw ValueError("save_safetensors", "tensor '" + name + "' is undefined");
    const uint64_t n = static_cast<uint64_t>(t.numel()) * element_size(t.dtype());
    header[name] = {{"dtype", code_of(t.dtype())},
                    {"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())},
                    {"data_offsets", {offset, offset + n}}};
    offset += n;
    contiguous.push_back(t.contiguous());
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // pad so that the data starts 8-byte aligned
  std::string out(8, '\0');
  const uint64_t header_bytes = text.size();
  std::memcpy(out.data(), &header_bytes, 8);
  out += text;
  for (const Tensor& t : contiguous) {
    const auto* p = static_cast<const char*>(t.storage()->data()) + t.offset() * element_size(t.dtype());
    out.append(p, static_cast<size_t>(t.numel()) * element_size(t.dtype()));
  }
  return out;
}

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  write_file_atomically(path, serialize_safetensors(tensors, metadata));
}

}  // namespace minigrad
