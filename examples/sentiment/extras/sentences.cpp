#include "examples/sentiment/extras/sentences.h"

#include <sstream>
#include <string>

#include "examples/common/utf8.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

LoadReport load_tsv(const std::filesystem::path& file) {
  std::istringstream in(minigrad::read_file("load_tsv", file.string()));
  LoadReport report;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t tab = line.rfind('\t');
    const std::string label = tab == std::string::npos ? "" : line.substr(tab + 1);
    if (tab == std::string::npos || (label != "0" && label != "1") || tab == 0) {
      report.skip(file.string() + ":" + std::to_string(number) + " (not 'sentence<TAB>0|1')");
      continue;
    }
    report.reviews.push_back({examples::valid_utf8(line.substr(0, tab)), label == "1" ? 1 : 0});
  }
  return report;
}

}  // namespace sentiment
