// Writing files so that a reader never sees half of one: the bytes go to a temporary file beside the
// target, which is then renamed over it (rename is atomic within a file system).
#pragma once

#include <string>
#include <string_view>

namespace minigrad {

// Throws minigrad::Error naming the file and the reason if any step fails; the temporary file is removed.
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace minigrad
