#include "examples/sentiment/extras/ngrams.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "examples/sentiment/extras/extended_config.h"

namespace sentiment {

using namespace minigrad;
using json = nlohmann::json;

namespace {

// An n-gram's hash, built from its last id backwards, an id at a time: each id combined into h (boost's
// hash_combine) and mixed by splitmix64's finaliser. The hash after n ids is the hash of the n-gram of the
// last n, so one pass from a position backwards gives every n-gram ending there.
constexpr uint64_t kNgramHashStart = 0x9E3779B97F4A7C15ull;
uint64_t ngram_hash_step(uint64_t h, int64_t id) {
  h ^= static_cast<uint64_t>(id) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

// The hash of the n-gram ids[0 .. n), the last id first.
uint64_t ngram_hash(const int64_t* ids, int64_t n) {
  uint64_t h = kNgramHashStart;
  for (int64_t j = n - 1; j >= 0; --j) h = ngram_hash_step(h, ids[j]);
  return h;
}

}  // namespace

Tensor ngram_rows(const Tensor& tokens, const Tensor& lengths, int64_t buckets, int64_t max_n) {
  check_tokens("ngram_rows", tokens, lengths);
  if (buckets < 2 || max_n < 2) throw ValueError("ngram_rows", "needs at least 2 buckets and max_n >= 2");
  const int64_t b = tokens.shape()[0], t = tokens.shape()[1], k = max_n - 1;
  Tensor rows = Tensor::zeros({b, t, k}, DType::Int64);
  const Tensor ids = tokens.contiguous();
  const int64_t* id = ids.data_ptr<const int64_t>();
  int64_t* row = rows.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t length = std::min(lengths.at({i}) >= 0 ? static_cast<int64_t>(lengths.at({i})) : 0, t);
    for (int64_t end = 0; end < length; ++end) {
      uint64_t h = kNgramHashStart;
      for (int64_t n = 1; n <= max_n && end - n + 1 >= 0; ++n) {
        h = ngram_hash_step(h, id[i * t + end - n + 1]);
        if (n >= 2) row[(i * t + end) * k + (n - 2)] = 1 + static_cast<int64_t>(h % uint64_t(buckets - 1));
      }
    }
  }
  return rows;
}

namespace {

std::string_view bytes_of(const int64_t* ids, int64_t n) {
  return {reinterpret_cast<const char*>(ids), static_cast<size_t>(n) * sizeof(int64_t)};
}

// Looked up by the bytes of the ids (a view, no copy: hence the transparent hash and equality).
struct BytesHash {
  using is_transparent = void;
  size_t operator()(std::string_view bytes) const { return std::hash<std::string_view>{}(bytes); }
};

}  // namespace

NgramVocabulary NgramVocabulary::build(const std::vector<std::span<const int64_t>>& documents, int64_t max_n,
                                       int64_t rows) {
  if (max_n < 2 || max_n > 5 || rows < 1)
    throw ValueError("NgramVocabulary", "needs 2 <= max_n <= 5 and at least 1 row");
  // Documents in which each n-gram occurs (its bytes -> count), and the last document that counted it,
  // so that an n-gram repeated in one review counts once.
  struct Seen {
    int64_t documents = 0;
    size_t last = SIZE_MAX;
  };
  std::unordered_map<std::string, Seen, BytesHash, std::equal_to<>> seen;
  for (size_t d = 0; d < documents.size(); ++d) {
    const std::span<const int64_t> ids = documents[d];
    for (size_t end = 1; end < ids.size(); ++end) {
      for (int64_t n = 2; n <= max_n && static_cast<int64_t>(end) + 1 >= n; ++n) {
        const std::string_view key = bytes_of(ids.data() + end + 1 - static_cast<size_t>(n), n);
        auto it = seen.find(key);
        if (it == seen.end()) it = seen.emplace(std::string(key), Seen{}).first;
        if (it->second.last != d) {
          it->second.last = d;
          ++it->second.documents;
        }
      }
    }
  }
  std::vector<std::pair<int64_t, std::vector<int64_t>>> ranked;  // (-documents, ids): sorts as wanted
  ranked.reserve(seen.size());
  for (const auto& [key, s] : seen) {
    std::vector<int64_t> ids(key.size() / sizeof(int64_t));
    std::memcpy(ids.data(), key.data(), key.size());
    ranked.emplace_back(-s.documents, std::move(ids));
  }
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(rows - 1));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
  std::vector<std::vector<int64_t>> ngrams;
  for (size_t i = 0; i < keep; ++i) ngrams.push_back(std::move(ranked[i].second));
  return NgramVocabulary(std::move(ngrams));
}

NgramVocabulary::NgramVocabulary(std::vector<std::vector<int64_t>> ngrams) : ngrams_(std::move(ngrams)) {
  if (ngrams_.empty()) return;
  slots_.resize(std::bit_ceil(2 * ngrams_.size()));
  padded_ids_.assign(ngrams_.size() * kMaxN, -1);
  const size_t mask = slots_.size() - 1;
  for (size_t i = 0; i < ngrams_.size(); ++i) {
    const std::vector<int64_t>& ids = ngrams_[i];
    const auto n = static_cast<int64_t>(ids.size());
    if (n < 2 || n > kMaxN || std::any_of(ids.begin(), ids.end(), [](int64_t id) { return id < 0; }))
      throw ValueError("NgramVocabulary", "n-gram " + std::to_string(i) + " is not 2 to 5 token ids");
    const uint64_t h = ngram_hash(ids.data(), n);
    if (find_row(h, ids.data(), n) != 0)
      throw ValueError("NgramVocabulary", "n-gram " + std::to_string(i) + " is listed twice");
    std::copy(ids.begin(), ids.end(), padded_ids_.begin() + static_cast<std::ptrdiff_t>(i * kMaxN));
    size_t s = h & mask;
    while (slots_[s].row != 0) s = (s + 1) & mask;
    slots_[s] = Slot{h, static_cast<int64_t>(i) + 1};
  }
}

int64_t NgramVocabulary::find_row(uint64_t hash, const int64_t* ids, int64_t n) const {
  if (slots_.empty() || n < 2 || n > kMaxN) return 0;
  const size_t mask = slots_.size() - 1;
  for (size_t s = hash & mask;; s = (s + 1) & mask) {  // ends: at least half the slots are empty
    const Slot& slot = slots_[s];
    if (slot.row == 0) return 0;
    if (slot.hash != hash) continue;
    const int64_t* row_ids = padded_ids_.data() + (slot.row - 1) * kMaxN;
    if (std::equal(ids, ids + n, row_ids) && (n == kMaxN || row_ids[n] == -1)) return slot.row;
  }
}

int64_t NgramVocabulary::row(const int64_t* ids, int64_t n) const {
  return find_row(ngram_hash(ids, n), ids, n);
}

Tensor NgramVocabulary::rows(const Tensor& tokens, const Tensor& lengths, int64_t max_n) const {
  check_tokens("NgramVocabulary::rows", tokens, lengths);
  if (max_n < 2) throw ValueError("NgramVocabulary::rows", "needs max_n >= 2");
  const int64_t b = tokens.shape()[0], t = tokens.shape()[1], k = max_n - 1;
  Tensor out = Tensor::zeros({b, t, k}, DType::Int64);
  const Tensor ids = tokens.contiguous();
  const int64_t* id = ids.data_ptr<const int64_t>();
  int64_t* row_out = out.data_ptr<int64_t>();
  const std::vector<int64_t> valid = lengths.to_vector<int64_t>();  // (B)
  // Reviews split between threads, since the lookups run at every step (docs/performance.md, "The main
  // job's step"); a lookup, a step of the hash and a probe of the table, weighs as 32 elements in the grain.
  parallel_for(b, t * k * 32, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const int64_t length = std::clamp<int64_t>(valid[static_cast<size_t>(i)], 0, t);
      for (int64_t end = 1; end < length; ++end) {
        uint64_t h = ngram_hash_step(kNgramHashStart, id[i * t + end]);  // the n-grams ending at `end`
        for (int64_t n = 2; n <= max_n && end - n + 1 >= 0; ++n) {
          h = ngram_hash_step(h, id[i * t + end - n + 1]);
          row_out[(i * t + end) * k + (n - 2)] = find_row(h, id + i * t + end - n + 1, n);
        }
      }
    }
  });
  return out;
}

json NgramVocabulary::to_json(const Vocabulary& vocabulary) const {
  json out = json::array();
  for (const std::vector<int64_t>& ids : ngrams_) {
    std::string text;
    for (int64_t id : ids) text += (text.empty() ? "" : " ") + vocabulary.token(id);
    out.push_back(std::move(text));
  }
  return out;
}

NgramVocabulary NgramVocabulary::from_json(const json& j, const Vocabulary& vocabulary,
                                           const std::string& source) {
  if (!j.is_array()) throw Error("checkpoint", source + " is not a list of n-grams");
  std::vector<std::vector<int64_t>> ngrams;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw Error("checkpoint", source + ": entry " + std::to_string(i) + " is not a string");
    const std::string& text = j[i].get_ref<const std::string&>();
    std::vector<int64_t> ids;
    for (size_t start = 0; start <= text.size();) {
      const size_t space = std::min(text.find(' ', start), text.size());
      const std::string token = text.substr(start, space - start);
      const int64_t id = vocabulary.id(token);
      if (id == Vocabulary::kUnk && token != vocabulary.token(Vocabulary::kUnk)) {
        throw Error("checkpoint", source + ": entry " + std::to_string(i) + " (\"" + text + "\") has \"" +
                                      token + "\", which is not in the vocabulary");
      }
      ids.push_back(id);
      start = space + 1;
    }
    if (ids.size() < 2 || ids.size() > 5)
      throw Error("checkpoint", source + ": entry " + std::to_string(i) + " is not 2 to 5 tokens");
    ngrams.push_back(std::move(ids));
  }
  try {
    return NgramVocabulary(std::move(ngrams));
  } catch (const ValueError& e) {
    throw Error("checkpoint", source + ": " + e.detail());
  }
}

NgramVocabulary build_ngram_vocabulary(const Config& config, const std::vector<Example>& examples) {
  const ExtendedConfig e = ExtendedConfig::of(config);
  if (e.ngram_buckets == 0 || !e.ngram_vocabulary) return {};
  std::vector<std::span<const int64_t>> documents;
  documents.reserve(examples.size());
  for (const Example& e : examples) documents.emplace_back(e.ids);
  return NgramVocabulary::build(documents, e.ngram_max, e.ngram_buckets);
}

}  // namespace sentiment
