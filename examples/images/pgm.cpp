#include "examples/images/pgm.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

namespace minigrad::images {

namespace {

constexpr const char* kOp = "read_pgm";

// The next header field: a whole number after white space and '#' comments.
int64_t header_number(std::istream& in, const std::string& path, const char* what) {
  while (true) {
    const int c = in.peek();
    if (c == '#') {
      std::string comment;
      std::getline(in, comment);
    } else if (c != EOF && std::isspace(c)) {
      in.get();
    } else {
      break;
    }
  }
  int64_t value = -1;
  if (!(in >> value) || value < 1)
    throw Error(kOp, path + ": the header's " + what + " is not a positive number");
  return value;
}

}  // namespace

Tensor read_pgm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(kOp, path + ": cannot open the file");
  std::string magic(2, '\0');
  in.read(magic.data(), 2);
  if (!in || (magic != "P5" && magic != "P2")) {
    throw Error(kOp, path + ": not a PGM image (it starts with neither P5 nor P2)");
  }
  const int64_t width = header_number(in, path, "width");
  const int64_t height = header_number(in, path, "height");
  const int64_t maxval = header_number(in, path, "maxval");
  if (maxval > 65535) throw Error(kOp, path + ": maxval " + std::to_string(maxval) + " is above 65535");
  if (width > 1 << 15 || height > 1 << 15) {
    throw Error(kOp, path + ": " + std::to_string(width) + "×" + std::to_string(height) + " is too large");
  }
  if (magic == "P5") in.get();  // the single white-space character after maxval
  // What the header promises, checked against what the file holds before anything is allocated: P5 has
  // one or two bytes per pixel, P2 at least one digit.
  const int bytes = magic == "P2" ? 1 : maxval < 256 ? 1 : 2;
  const std::streampos pixels_start = in.tellg();
  in.seekg(0, std::ios::end);
  const int64_t remaining = static_cast<int64_t>(in.tellg() - pixels_start);
  in.seekg(pixels_start);
  if (!in || remaining < width * height * bytes) {
    throw Error(kOp, path + ": " + std::to_string(remaining) + " bytes after the header, too few for the " +
                         std::to_string(width) + "×" + std::to_string(height) +
                         " pixels it promises (truncated)");
  }
  std::vector<float> pixels(static_cast<size_t>(width * height));
  if (magic == "P5") {
    std::vector<unsigned char> raw(pixels.size() * bytes);
    in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
    if (!in) throw Error(kOp, path + ": cannot read the pixels");
    for (size_t i = 0; i < pixels.size(); ++i) {
      const int value = bytes == 1 ? raw[i] : raw[2 * i] << 8 | raw[2 * i + 1];  // 16 bits: big-endian
      if (value > maxval) {
        throw Error(kOp, path + ": pixel " + std::to_string(i) + " is " + std::to_string(value) +
                             ", above the header's maxval " + std::to_string(maxval));
      }
      pixels[i] = static_cast<float>(value) / static_cast<float>(maxval);
    }
  } else {
    for (size_t i = 0; i < pixels.size(); ++i) {
      int64_t value = -1;
      if (!(in >> value) || value < 0 || value > maxval) {
        throw Error(kOp, path + ": pixel " + std::to_string(i) + " is missing or not in 0.." +
                             std::to_string(maxval));
      }
      pixels[i] = static_cast<float>(value) / static_cast<float>(maxval);
    }
  }
  return Tensor::from_vector(pixels, {height, width});
}

void write_pgm(const std::string& path, const Tensor& image) {
  if (image.rank() != 2)
    throw ShapeError("write_pgm", "expects an image (rows, columns), got " + image.shape().str());
  const int64_t height = image.shape()[0], width = image.shape()[1];
  std::string bytes = "P5\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  for (double v : image.to_vector<double>()) {
    bytes += static_cast<char>(std::lround(std::clamp(v, 0.0, 1.0) * 255));
  }
  write_file_atomically(path, bytes);
}

}  // namespace minigrad::images
