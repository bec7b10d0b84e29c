#include "tensor/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "tensor/file_io.h"

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
  uint64_t numel = 1;
  for (const json& size : shape) {
    if (!size.is_number_unsigned()) reject(source, where + ": shape entries must be non-negative integers");
    const uint64_t s = size.get<uint64_t>();
    if (s > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (s != 0 && numel > std::numeric_limits<uint64_t>::max() / s)) {
      reject(source, where + ": its shape overflows");
    }
    numel *= s;
    entry.shape.push_back(static_cast<int64_t>(s));
  }
  if (numel > std::numeric_limits<uint64_t>::max() / entry.code->bytes)
    reject(source, where + ": its size overflows");

  const json& offsets = info.contains("data_offsets") ? info["data_offsets"] : json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    reject(source, where + ": data_offsets must be two non-negative integers");
  }
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.end < entry.begin) reject(source, where + ": data_offsets end before they begin");
  if (entry.end - entry.begin != numel * entry.code->bytes) {
    reject(source, where + ": data_offsets cover " + std::to_string(entry.end - entry.begin) + " bytes but " +
                       code + " " + entry.shape.str() + " needs " +
                       std::to_string(numel * entry.code->bytes));
  }
  return entry;
}

}  // namespace

const Tensor* SafetensorsFile::find(std::string_view name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  return nullptr;
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8)
    reject(source, "only " + std::to_string(bytes.size()) + " bytes, too short for a header");
  uint64_t header_bytes;
  std::memcpy(&header_bytes, bytes.data(), 8);
  if (header_bytes > kMaxHeaderBytes) {
    reject(source, "header length " + std::to_string(header_bytes) + " exceeds the limit of " +
                       std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_bytes > bytes.size() - 8) {
    reject(source, "header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
                       std::to_string(bytes.size()) + " bytes)");
  }
  const std::string_view header = bytes.substr(8, header_bytes);
  if (header.empty() || header.front() != '{') reject(source, "the header does not start with '{'");

  // Parse, refusing duplicate names at the top level (JSON allows them; a file that names a tensor twice
  // is ambiguous). nlohmann's parser checks UTF-8.
  std::set<std::string> seen;
  std::string duplicate;
  json root;
  try {
    root = json::parse(header.begin(), header.end(), [&](int depth, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::key && depth == 1) {
        const std::string key = parsed.get<std::string>();
        if (!seen.insert(key).second && duplicate.empty()) duplicate = key;
      }
      return true;
    });
  } catch (const json::exception& e) {
    reject(source, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) reject(source, "the header names '" + duplicate + "' twice");
  if (!root.is_object()) reject(source, "the header is not a JSON object");

  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : root.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) reject(source, "__metadata__ is not an object");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) reject(source, "__metadata__ value for '" + key + "' is not a string");
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(source, name, info));
  }

  // The tensors' byte ranges, in order, must tile the data section exactly.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const uint64_t data_bytes = bytes.size() - 8 - header_bytes;
  uint64_t expected = 0;
  for (const Entry& e : entries) {
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

  const char* data = bytes.data() + 8 + header_bytes;
  for (const Entry& e : entries) {
    Tensor t = Tensor::empty(e.shape, e.code->dtype);
    std::memcpy(t.storage()->data(), data + e.begin, e.end - e.begin);
    if (e.code->dtype == DType::Bool) {
      // A C++ bool must be 0 or 1; any other byte would be undefined behaviour when read.
      const auto* b = static_cast<const uint8_t*>(t.storage()->data());
      for (uint64_t i = 0; i < e.end - e.begin; ++i) {
        if (b[i] > 1)
          reject(source, "tensor '" + e.name + "': BOOL byte " + std::to_string(b[i]) + " is not 0 or 1");
      }
    }
    file.tensors.emplace_back(e.name, std::move(t));
  }
  return file;
}

SafetensorsFile load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("load_safetensors", path + ": cannot open the file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("load_safetensors", path + ": read error");
  return parse_safetensors(bytes, path);
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
