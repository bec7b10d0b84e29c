// Fashion-MNIST's files (and MNIST's): the IDX format, gzip-compressed, as Debian's dataset-fashion-mnist
// installs them under /usr/share/datasets/fashion-mnist/.
//
// An IDX file is a magic number, the size of each dimension, then the values, all big-endian:
//   images: 0x00000803 (unsigned bytes, 3 dimensions), count, rows, columns, then count·rows·columns bytes
//   labels: 0x00000801 (unsigned bytes, 1 dimension), count, then count bytes
// Each reader checks all of it (the gzip stream, the magic number, the sizes against the data) and throws
// minigrad::Error naming the file and what is wrong.
#pragma once

#include <string>

#include "minigrad/minigrad.h"

namespace minigrad::images {

// The images as float32 (count, 1, rows, columns), each pixel / 255 in [0, 1].
Tensor read_idx_images(const std::string& path);
// The labels as int64 (count), each below `classes`.
Tensor read_idx_labels(const std::string& path, int64_t classes = 10);

// The whole decompressed content of a gzip file (or of a plain file, which zlib passes through).
std::string read_gzip(const std::string& path);

}  // namespace minigrad::images
