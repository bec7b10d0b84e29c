// minigrad-fuzz-safetensors: a deterministic mutation fuzzer of the safetensors loader.
//
// It starts from a corpus of real files (a Transformer's weights, an optimizer's training state, every
// dtype, metadata) and crafted hostile ones (thousands of entries, overflowing shapes, a key twice, a
// huge header length), damages them the ways files get damaged or forged — truncation, flipped bytes,
// a forged header length, deleted, repeated or inserted stretches, JSON punctuation, numbers replaced by
// boundary values, headers spliced onto other files' data — and loads every result. Each load must
// either give a consistent file or throw a minigrad::Error naming the file, and take under a second.
// Run under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/fuzz-safetensors.sh), any memory
// error ends the run with a report. The same seed gives the same files.
//
//   minigrad-fuzz-safetensors --iterations 1000000 --seed 1 --keep failures/
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

using namespace minigrad;
namespace fs = std::filesystem;

namespace {

std::string header_of(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = json.size();
  std::memcpy(out.data(), &n, 8);
  return out + json + data;
}

// The seed corpus: real files minigrad writes, and hand-made hostile ones.
std::vector<std::string> seed_corpus() {
  std::vector<std::string> corpus;
  Generator g(1);
  nn::TransformerEncoder encoder(
      {.layer = {.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2, .generator = &g},
       .num_layers = 1,
       .tokens = {.vocab_size = 30, .max_len = 12}});
  corpus.push_back(
      optim::serialize_weights(encoder, {{"architecture", "tiny"}, {"vocabulary", "30 tokens"}}));
  {  // a training state: optimizer moments, step counts, the generator's words
    const fs::path file = fs::temp_directory_path() / ("fuzz_state_" + std::to_string(::getpid()));
    optim::Adam adam(encoder.parameters(), {});
    for (const Variable& p : encoder.parameters()) p.set_grad(Tensor::ones(p.shape()));
    adam.step();
    optim::save_training_state(file.string(), adam, g, 1);
    corpus.push_back(read_file("fuzz", file.string()));
    fs::remove(file);
  }
  corpus.push_back(serialize_safetensors({{"f64", Tensor::normal({2, 3}, 0, 1, DType::Float64, &g)},
                                          {"i64", Tensor::arange(4)},
                                          {"mask", Tensor::from_values({1, 0, 1}, {3}, DType::Bool)},
                                          {"empty", Tensor::zeros({0, 5})},
                                          {"scalar", Tensor::scalar(2.5)}},
                                         {{"format", "pt"}}));
  std::string many = "{";
  for (int i = 0; i < 200; ++i) {
    many +=
        (i ? ",\"t" : "\"t") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  }
  corpus.push_back(header_of(many + "}", ""));
  corpus.push_back(header_of(
      R"({"a":{"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})",
      ""));
  corpus.push_back(header_of(R"({"a":{"dtype":"F64","dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                             std::string(8, '\0')));
  std::string huge(16, '\0');
  const uint64_t big = uint64_t{1} << 62;
  std::memcpy(huge.data(), &big, 8);
  corpus.push_back(huge);
  return corpus;
}

// The 8-byte length at the front, where the file has one.
uint64_t header_length(const std::string& bytes) {
  uint64_t n = 0;
  if (bytes.size() >= 8) std::memcpy(&n, bytes.data(), 8);
  return n;
}

// A position inside the header if the file has a plausible one, else anywhere.
size_t in_header(const std::string& bytes, Generator& g) {
  const uint64_t n = header_length(bytes);
  if (bytes.size() > 8 && n > 0 && n <= bytes.size() - 8) return 8 + g.next_below(n);
  return bytes.empty() ? 0 : g.next_below(bytes.size());
}

// One random damage to `bytes`.
void mutate(std::string& bytes, const std::vector<std::string>& corpus, Generator& g) {
  static const char* const kNumbers[] = {"0",
                                         "1",
                                         "7",
                                         "-1",
                                         "2147483648",
                                         "4294967296",
                                         "4611686018427387904",
                                         "9223372036854775807",
                                         "9223372036854775808",
                                         "18446744073709551615",
                                         "18446744073709551616",
                                         "1e309",
                                         "0.5",
                                         "[]"};
  switch (g.next_below(10)) {
    case 0:  // truncate
      bytes.resize(bytes.empty() ? 0 : g.next_below(bytes.size()));
      break;
    case 1:  // flip a few bytes, mostly in the header
      for (uint64_t k = 0, n = 1 + g.next_below(4); k < n && !bytes.empty(); ++k) {
        bytes[g.next_below(3) ? in_header(bytes, g) : g.next_below(bytes.size())] =
            static_cast<char>(g.next_below(256));
      }
      break;
    case 2: {  // forge the header length: random, huge, or just off
      if (bytes.size() < 8) break;
      const uint64_t n = g.next_below(2) ? g.next_u64() : header_length(bytes) + g.next_below(32) - 16;
      std::memcpy(bytes.data(), &n, 8);
      break;
    }
    case 3:  // delete a stretch of the header
      if (bytes.size() > 8) bytes.erase(in_header(bytes, g), 1 + g.next_below(16));
      break;
    case 4:  // JSON punctuation where something else was
      if (bytes.size() > 8) bytes[in_header(bytes, g)] = "{}[]\",:-0e"[g.next_below(10)];
      break;
    case 5: {  // repeat a stretch of the header (keys twice, objects twice) and fix up the length
      if (bytes.size() <= 8) break;
      const size_t at = in_header(bytes, g);
      const std::string piece = bytes.substr(at, 1 + g.next_below(64));
      bytes.insert(at, piece);
      if (g.next_below(2)) {
        const uint64_t n = header_length(bytes) + piece.size();
        std::memcpy(bytes.data(), &n, 8);
      }
      break;
    }
    case 6: {  // a number in the header replaced by a boundary value
      if (bytes.size() <= 8) break;
      size_t at = in_header(bytes, g);
      while (at < bytes.size() && !std::isdigit(static_cast<unsigned char>(bytes[at]))) ++at;
      size_t end = at;
      while (end < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[end]))) ++end;
      if (at == end) break;
      const std::string value = kNumbers[g.next_below(std::size(kNumbers))];
      bytes.replace(at, end - at, value);
      if (g.next_below(2)) {  // keep the length consistent half the time, so the JSON is parsed
        const uint64_t n = header_length(bytes) + value.size() - (end - at);
        std::memcpy(bytes.data(), &n, 8);
      }
      break;
    }
    case 7: {  // random bytes inserted
      const size_t at = bytes.empty() ? 0 : g.next_below(bytes.size());
      std::string junk(1 + g.next_below(16), '\0');
      for (char& c : junk) c = static_cast<char>(g.next_below(256));
      bytes.insert(at, junk);
      break;
    }
    case 8: {  // this header on another file's data
      const std::string& other = corpus[g.next_below(corpus.size())];
      const uint64_t n = header_length(bytes), m = header_length(other);
      if (bytes.size() >= 8 && n <= bytes.size() - 8 && other.size() >= 8 && m <= other.size() - 8) {
        bytes = bytes.substr(0, 8 + n) + other.substr(8 + m);
      }
      break;
    }
    default:  // data grown or shrunk by a few bytes
      if (g.next_below(2)) {
        bytes.append(1 + g.next_below(8), '\0');
      } else if (!bytes.empty()) {
        bytes.pop_back();
      }
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Deterministic mutation fuzzing of minigrad's safetensors loader."};
  int64_t iterations = 100000;
  uint64_t seed = 1;
  int64_t file_every = 100;
  std::string keep;
  app.add_option("--iterations", iterations, "Mutated files to load")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--seed", seed, "Seed of the mutations")->capture_default_str();
  app.add_option("--file-every", file_every, "Every Nth file is written to disk and loaded by path")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--keep", keep, "Folder to save each failing input in");
  CLI11_PARSE(app, argc, argv);

  const std::vector<std::string> corpus = seed_corpus();
  Generator g(seed);
  const fs::path file = fs::temp_directory_path() / ("fuzz_" + std::to_string(::getpid()) + ".safetensors");
  int64_t loaded = 0, refused = 0, failures = 0, slowest_case = -1;
  double slowest = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i) {
    std::string bytes = corpus[g.next_below(corpus.size())];
    for (uint64_t k = 0, n = 1 + g.next_below(3); k < n; ++k) mutate(bytes, corpus, g);
    const bool from_disk = i % file_every == 0;
    const std::string source = from_disk ? file.string() : "mutant.safetensors";
    std::string problem;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      SafetensorsFile f;
      if (from_disk) {
        write_file_atomically(file.string(), bytes);
        f = load_safetensors(file.string());
      } else {
        f = parse_safetensors(bytes, source);
      }
      size_t total = 0;
      for (const auto& [name, t] : f.tensors)
        total += static_cast<size_t>(t.numel()) * element_size(t.dtype());
      if (total > bytes.size()) problem = "loaded more tensor bytes than the file holds";
      ++loaded;
    } catch (const Error& e) {
      if (std::string(e.what()).rfind("load_safetensors: " + source + ": ", 0) != 0) {
        problem = std::string("an error that does not name the file: ") + e.what();
      }
      ++refused;
    } catch (const std::exception& e) {
      problem = std::string("not a minigrad::Error: ") + e.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (seconds > slowest) {
      slowest = seconds;
      slowest_case = i;
    }
    if (seconds > 1.0) problem = "took " + std::to_string(seconds) + " s";
    if (!problem.empty()) {
      ++failures;
      std::printf("case %lld: %s\n", static_cast<long long>(i), problem.c_str());
      if (!keep.empty()) {
        fs::create_directories(keep);
        write_file_atomically((fs::path(keep) / ("case" + std::to_string(i) + ".safetensors")).string(),
                              bytes);
      }
    }
  }
  fs::remove(file);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "fuzzed %lld files (seed %llu, every %lld-th through a file): %lld loaded, %lld refused with an error "
      "naming the file; slowest load %.1f ms (case %lld); %.1f s in all\n",
      static_cast<long long>(iterations), static_cast<unsigned long long>(seed),
      static_cast<long long>(file_every), static_cast<long long>(loaded), static_cast<long long>(refused),
      slowest * 1e3, static_cast<long long>(slowest_case), total);
  std::printf("fuzz: %lld passed, %lld failed\n", static_cast<long long>(iterations - failures),
              static_cast<long long>(failures));
  // Both outcomes must have happened, or the mutations are not reaching the loader's checks.
  if (loaded == 0 || refused == 0) {
    std::printf("fuzz: the mutations produced only %s files\n", loaded == 0 ? "refused" : "loadable");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
