// Reading and writing the safetensors format (https://github.com/huggingface/safetensors), so that
// PyTorch and Hugging Face tools can read minigrad's tensors and minigrad can read theirs:
//
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  a JSON object: {"__metadata__": {"key": "value", ...},
//                              "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//              padded with spaces to a multiple of 8 bytes
//   [rest]     the tensors' bytes, little-endian and row-major, at data_offsets from the start of this part
//
// A file from elsewhere is untrusted. load_safetensors reads only regular files (not folders, FIFOs or
// devices), and reads the 8-byte length and the header first, checking them against the file's size,
// before it reads (only) the data the header declares. It validates what the reference implementation
// does, and more: the header length within the format's limit (100 MB) and within the file, well-formed
// UTF-8 JSON starting with '{', no key twice in any object and no nesting deeper than the format's,
// known dtypes, whole non-negative shapes whose element, stride and byte counts fit in 64 bits, offsets
// that tile the data section exactly (no gaps, no overlaps, nothing left over) and byte counts that
// match the shapes. Parsing takes time linear in the header's size. Every rejection is a minigrad::Error
// naming the file and the problem.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

struct SafetensorsFile {
  // Tensors in the order of their data in the file.
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;
  std::string source = {};  // the file it was read from (or parse_safetensors' source), for errors

  // The tensor called `name`, or nullptr. A linear search: for many look-ups, index `tensors` first.
  const Tensor* find(std::string_view name) const;
  // The tensor called `name` (safetensors' get_tensor); throws, naming the file and the tensor, if there
  // is none.
  const Tensor& at(std::string_view name) const;
};

// Writes through a temporary file renamed into place: a crash never leaves half a file at `path`.
// minigrad writes F32, F64, I64 and BOOL tensors.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

SafetensorsFile load_safetensors(const std::string& path);

// The same checks on bytes already in memory; `source` names them in error messages.
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source);

// The bytes save_safetensors would write.
std::string serialize_safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                  const std::map<std::string, std::string>& metadata = {});

}  // namespace minigrad
