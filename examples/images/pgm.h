// Greyscale images in the PGM format (Netpbm), read and written by the example itself: the binary "P5"
// and the plain-text "P2" form, 8 or 16 bits a pixel. Any image program exports it (GIMP, ImageMagick's
// `convert shirt.png shirt.pgm`).
#pragma once

#include <string>

#include "minigrad/minigrad.h"

namespace minigrad::images {

// The image as float32 (rows, columns), each pixel / maxval in [0, 1]. Throws minigrad::Error naming the
// file and what is wrong (not PGM, a bad header, too few pixels).
Tensor read_pgm(const std::string& path);

// image (rows, columns) with values in [0, 1] as an 8-bit binary PGM, written to a temporary name and
// renamed into place.
void write_pgm(const std::string& path, const Tensor& image);

}  // namespace minigrad::images
