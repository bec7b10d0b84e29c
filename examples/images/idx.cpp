#include "examples/images/idx.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace minigrad::images {

namespace {

constexpr const char* kOp = "read_idx";
constexpr uint32_t kUnsignedBytes3d = 0x00000803, kUnsignedBytes1d = 0x00000801;

uint32_t big_endian_u32(const std::string& data, size_t offset) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(data[offset + i]);
  return value;
}

// The file's content after checking its header: the magic number and `dims` sizes, and that exactly
// their product of bytes follows.
struct Parsed {
  std::string data;
  std::vector<int64_t> sizes;
  size_t header_bytes = 0;
};

Parsed parse(const std::string& path, uint32_t magic, size_t dims, const char* kind) {
  Parsed p{read_gzip(path), {}, 4 + 4 * dims};
  auto too_short = [&](size_t needed) {
    return Error(kOp, path + ": " + std::to_string(p.data.size()) + " bytes, too short for an IDX " + kind +
                          " header of " + std::to_string(needed));
  };
  if (p.data.size() < 4) throw too_short(p.header_bytes);
  const uint32_t found = big_endian_u32(p.data, 0);
  if (found != magic) {
    char text[96];
    std::snprintf(text, sizeof text, "magic number 0x%08x, expected 0x%08x (IDX %s)", found, magic, kind);
    throw Error(kOp, path + ": " + text);
  }
  if (p.data.size() < p.header_bytes) throw too_short(p.header_bytes);
  // The product of the sizes, checked against the data at each step so that it cannot overflow.
  const uint64_t have = p.data.size() - p.header_bytes;
  uint64_t expected = 1;
  for (size_t d = 0; d < dims; ++d) {
    p.sizes.push_back(big_endian_u32(p.data, 4 + 4 * d));
    const uint64_t size = static_cast<uint64_t>(p.sizes.back());
    expected = size == 0 ? 0 : (expected > have / size + 1 ? have + 1 : expected * size);
  }
  if (have != expected) {
    std::string promised;  // the sizes, not their product, which may have been capped
    for (size_t d = 0; d < dims; ++d) promised += (d > 0 ? "×" : "") + std::to_string(p.sizes[d]);
    throw Error(kOp, path + ": the header promises " + promised + " bytes of " + kind +
                         " data, the file holds " + std::to_string(have) +
                         (have < expected ? " (truncated)" : ""));
  }
  return p;
}

}  // namespace

std::string read_gzip(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(kOp, path + ": no such file" +
                         std::string(path.find("fashion-mnist") != std::string::npos
                                         ? " (Debian: apt-get install dataset-fashion-mnist)"
                                         : ""));
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw Error(kOp, path + ": cannot be opened");
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  // A stream cut short still returns what it holds; gzerror says so (Z_BUF_ERROR, "unexpected end of file").
  int status = Z_OK;
  const std::string message = gzerror(file, &status);
  gzclose(file);
  if (n < 0 || status != Z_OK) throw Error(kOp, path + ": not a valid gzip stream (" + message + ")");
  return out;
}

Tensor read_idx_images(const std::string& path) {
  const Parsed p = parse(path, kUnsignedBytes3d, 3, "images");
  const int64_t count = p.sizes[0], rows = p.sizes[1], cols = p.sizes[2];
  Tensor images = Tensor::zeros({count, 1, rows, cols});
  float* out = images.data_ptr<float>();
  for (int64_t i = 0; i < count * rows * cols; ++i) {
    out[i] = static_cast<float>(static_cast<unsigned char>(p.data[p.header_bytes + static_cast<size_t>(i)])) /
             255.0f;
  }
  return images;
}

Tensor read_idx_labels(const std::string& path, int64_t classes) {
  const Parsed p = parse(path, kUnsignedBytes1d, 1, "labels");
  std::vector<int64_t> labels(static_cast<size_t>(p.sizes[0]));
  for (size_t i = 0; i < labels.size(); ++i) {
    labels[i] = static_cast<unsigned char>(p.data[p.header_bytes + i]);
    if (labels[i] >= classes) {
      throw Error(kOp, path + ": label " + std::to_string(labels[i]) + " at index " + std::to_string(i) +
                           " is not below " + std::to_string(classes) + " classes");
    }
  }
  return Tensor::from_vector(labels, {p.sizes[0]});
}

}  // namespace minigrad::images
