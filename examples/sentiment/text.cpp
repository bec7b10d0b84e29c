#include "examples/sentiment/text.h"

#include <algorithm>
#include <map>

#include "examples/common/utf8.h"
#include "minigrad/tensor/error.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

namespace {

bool is_word_byte(unsigned char c) {
  return std::isalnum(c) || c >= 0x80;
}

}  // namespace

std::vector<std::string> tokenize(std::string_view raw) {
  const std::string valid = examples::valid_utf8(raw);
  const std::string_view text = valid;
  std::vector<std::string> tokens;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '<' && text.substr(i, 6) == "<br />") {  // IMDB's line break
      flush();
      i += 5;
    } else if (is_word_byte(c)) {
      word += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
    } else if (c == '\'' && !word.empty() && i + 1 < text.size() &&
               is_word_byte(static_cast<unsigned char>(text[i + 1]))) {
      word += '\'';  // inside a word: didn't, it's
    } else if (std::ispunct(c)) {
      flush();
      tokens.emplace_back(1, static_cast<char>(c));
    } else {
      flush();  // whitespace and control characters separate words
    }
  }
  flush();
  return tokens;
}

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  if (tokens_.size() < 2 || tokens_[0] != "<pad>" || tokens_[1] != "<unk>") {
    throw minigrad::ValueError("Vocabulary", "must start with <pad> and <unk>");
  }
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (!ids_.emplace(tokens_[i], static_cast<int64_t>(i)).second) {
      throw minigrad::ValueError("Vocabulary", "token '" + tokens_[i] + "' appears twice");
    }
  }
}

Vocabulary Vocabulary::build(const std::vector<std::vector<std::string>>& documents, int64_t max_size,
                             int64_t min_freq) {
  if (max_size < 2) throw minigrad::ValueError("Vocabulary", "max_size must be at least 2");
  std::unordered_map<std::string, int64_t> counts;
  for (const auto& doc : documents) {
    for (const auto& token : doc) ++counts[token];
  }
  std::vector<std::pair<std::string, int64_t>> ranked;
  for (auto& [token, count] : counts) {
    if (count >= min_freq) ranked.emplace_back(token, count);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> tokens = {"<pad>", "<unk>"};
  for (const auto& [token, count] : ranked) {
    if (static_cast<int64_t>(tokens.size()) >= max_size) break;
    if (token != "<pad>" && token != "<unk>") tokens.push_back(token);
  }
  return Vocabulary(std::move(tokens));
}

int64_t Vocabulary::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

namespace {

// The longest review file read: IMDB's longest is 14 kB; anything near this is not a review.
constexpr uint64_t kMaxReviewBytes = uint64_t{64} << 20;

// "123_8.txt" -> 123; -1 for a name that does not start with a number and '_'.
int64_t file_number(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  const size_t underscore = name.find('_');
  if (underscore == 0 || underscore == std::string::npos || underscore > 9) return -1;
  int64_t number = 0;
  for (size_t i = 0; i < underscore; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    number = number * 10 + (name[i] - '0');
  }
  return number;
}

}  // namespace

void LoadReport::skip(const std::string& what) {
  if (skipped_examples.size() < 5) skipped_examples.push_back(what);
  ++skipped;
}

LoadReport load_imdb_split(const std::filesystem::path& root, const std::string& split) {
  namespace fs = std::filesystem;
  LoadReport report;
  for (const auto& [folder, label] : {std::pair<const char*, int64_t>{"neg", 0}, {"pos", 1}}) {
    const fs::path dir = root / split / folder;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      throw minigrad::Error("load_imdb",
                            "no folder " + dir.string() +
                                " (expected the aclImdb layout: <root>/{train,test}/{pos,neg}/*.txt)");
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".txt") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::string text;
      try {
        text = minigrad::read_file("load_imdb", file.string(), kMaxReviewBytes);
      } catch (const minigrad::Error& e) {
        report.skip(e.detail());  // names the file and why: a folder, unreadable, too large
        continue;
      }
      if (text.empty()) {
        report.skip(file.string() + " (empty)");
        continue;
      }
      report.reviews.push_back({examples::valid_utf8(text), label, file_number(file)});
    }
  }
  return report;
}

}  // namespace sentiment
