// The safetensors format: exact bytes, round trips, and the refusal of every kind of bad file.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

// A file by hand, as the format describes it: 8-byte little-endian header length, the header, the data.
std::string file_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string s(values.size() * 4, '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}

void expect_rejected(const std::string& bytes, const std::string& problem) {
  expect_error<Error>([&] { parse_safetensors(bytes, "test.safetensors"); },
                      "load_safetensors: test.safetensors: " + problem);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(safetensors)

BOOST_AUTO_TEST_CASE(the_bytes_are_exactly_the_format) {
  const std::string bytes =
      serialize_safetensors({{"weight", Tensor::from_values({1.5, -2}, {2}, DType::Float32)},
                             {"ids", Tensor::from_vector<int64_t>({7}, {1, 1})}},
                            {{"format", "pt"}});
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"ids":{"data_offsets":[8,16],"dtype":"I64","shape":[1,1]},)"
      R"("weight":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  const std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  BOOST_TEST(n == padded.size());
  BOOST_TEST(n % 8 == 0u);
  BOOST_TEST(bytes.substr(8, n) == padded);
  int64_t seven = 7;
  BOOST_TEST(bytes.substr(8 + n) ==
             float_bytes({1.5f, -2.0f}) + std::string(reinterpret_cast<char*>(&seven), 8));
}

BOOST_AUTO_TEST_CASE(a_file_written_elsewhere_is_read) {
  // Key order, spacing and padding as another writer might choose them.
  const std::string header =
      R"({"b": {"dtype": "BOOL", "shape": [3], "data_offsets": [8, 11]}, "a": {"dtype": "F32", "shape": [2], )"
      R"("data_offsets": [0, 8]}, "__metadata__": {"note": "hi"}}    )";
  const SafetensorsFile f =
      parse_safetensors(file_bytes(header, float_bytes({3, 4}) + std::string("\1\0\1", 3)), "x");
  BOOST_TEST(f.tensors.size() == 2u);
  BOOST_TEST(f.tensors[0].first == "a");  // in data order
  expect_equal(*f.find("a"), {3, 4});
  expect_equal(*f.find("b"), {1, 0, 1});
  BOOST_TEST(f.metadata.at("note") == "hi");
  BOOST_TEST(f.find("c") == nullptr);
}

BOOST_AUTO_TEST_CASE(round_trip_of_every_dtype_through_a_file) {
  const std::string path = "roundtrip_test.safetensors";
  const Tensor transposed = Tensor::arange(0, 6, 1, DType::Float64).reshape({2, 3}).t();
  save_safetensors(path, {{"f64", transposed},
                          {"f32", Tensor::scalar(2.5)},
                          {"i64", Tensor::from_vector<int64_t>({-1, 1LL << 40}, {2})},
                          {"bool", Tensor::from_values({1, 0}, {2}, DType::Bool)},
                          {"empty", Tensor::zeros({0, 3})}});
  BOOST_TEST(!std::filesystem::exists(path + ".tmp"));  // renamed into place
  const SafetensorsFile f = load_safetensors(path);
  BOOST_TEST(f.find("f64")->to_vector() == transposed.to_vector());
  BOOST_TEST(f.find("f64")->shape() == (Shape{3, 2}));
  BOOST_TEST(f.find("f32")->rank() == 0);
  BOOST_TEST(f.find("f32")->item() == 2.5);
  BOOST_TEST(f.find("i64")->to_vector<int64_t>() == (std::vector<int64_t>{-1, 1LL << 40}));
  BOOST_TEST(f.find("bool")->dtype() == DType::Bool);
  BOOST_TEST(f.find("empty")->shape() == (Shape{0, 3}));
  std::filesystem::remove(path);
  expect_error<Error>(
      [] { load_safetensors("/nonexistent/model.safetensors"); },
      "load_safetensors: /nonexistent/model.safetensors: cannot open the file: No such file or directory");
  expect_error_containing<Error>(
      [] { save_safetensors("/nonexistent/dir/x.safetensors", {}); },
      "write /nonexistent/dir/x.safetensors: cannot create /nonexistent/dir/.x.safetensors.tmp-");
  expect_error<ValueError>(
      [] {
        serialize_safetensors({{"a", Tensor::zeros({1})}, {"a", Tensor::zeros({1})}});
      },
      "save_safetensors: the name 'a' is used twice");
}

BOOST_AUTO_TEST_CASE(every_kind_of_bad_file_is_refused_with_a_reason) {
  const std::string ok_tensor = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  const std::string data = float_bytes({1, 2});
  expect_rejected("abc", "only 3 bytes, too short for a header");
  std::string huge(8, '\0');
  const uint64_t big = 200'000'000;
  std::memcpy(huge.data(), &big, 8);
  expect_rejected(huge, "header length 200000000 exceeds the limit of 100000000 bytes");
  std::string past = file_bytes("{}", "");
  past[0] = 100;
  expect_rejected(past, "header length 100 runs past the end of the file (10 bytes)");
  expect_rejected(file_bytes(" {}", ""), "the header does not start with '{'");
  expect_error_containing<Error>([&] { parse_safetensors(file_bytes("{\"a\": ", ""), "t"); },
                                 "load_safetensors: t: the header is not valid JSON");
  expect_error_containing<Error>([&] { parse_safetensors(file_bytes("{\"\xff\": 1}", ""), "t"); },
                                 "the header is not valid JSON");  // not UTF-8
  expect_rejected(file_bytes(R"({"a": {"dtype": "Q8", "shape": [2], "data_offsets": [0, 8]}})", data),
                  "tensor 'a': unknown dtype 'Q8'");
  expect_rejected(file_bytes(R"({"a": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}})", data),
                  "tensor 'a': dtype F16 is not supported by minigrad");
  expect_rejected(file_bytes(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", data),
                  "tensor 'a': shape entries must be non-negative integers");
  expect_rejected(file_bytes(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", data),
                  "tensor 'a': data_offsets cover 8 bytes but F32 [3] needs 12");
  expect_rejected(file_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", data),
                  "tensor 'a': data_offsets end before they begin");
  expect_rejected(file_bytes(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", data),
                  "tensor 'a' starts at byte 4 of the data, expected 0 (a gap)");
  expect_rejected(
      file_bytes("{" + ok_tensor + R"(, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", data),
      "tensor 'b' starts at byte 4 of the data, expected 8 (it overlaps the previous one)");
  expect_rejected(file_bytes("{" + ok_tensor + "}", data + "xx"),
                  "the tensors cover 8 bytes of data but the file holds 10");
  expect_rejected(file_bytes("{" + ok_tensor + ", " + ok_tensor + "}", data),
                  "the key 'a' appears twice in one object");
  expect_rejected(file_bytes(R"({"__metadata__": {"k": 1}})", ""),
                  "__metadata__ value for 'k' is not a string");
  expect_rejected(file_bytes(R"({"a": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]}})", "\x02"),
                  "tensor 'a': BOOL byte 2 is not 0 or 1");
  expect_rejected(
      file_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}})", data),
      "tensor 'a': unknown field 'x'");
  expect_rejected(
      file_bytes(R"({"a": {"dtype": "F32", "shape": [1,1,1,1,1,1,1,1,2], "data_offsets": [0, 8]}})", data),
      "tensor 'a': 9 dimensions; minigrad supports at most 8");
  expect_rejected(
      file_bytes(R"({"a": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 8]}})",
                 data),
      "tensor 'a': shape [4611686018427387904,4] is too large: its element count overflows 64 bits");
}

BOOST_AUTO_TEST_CASE(thousands_of_mutated_files_are_refused_or_read_never_crash) {
  // Valid files, damaged at random the ways real files get damaged: truncated, bytes flipped, the length
  // replaced by nonsense, the JSON broken. Each must either load as a consistent file or be refused with
  // an error naming the file. Under AddressSanitizer this is also a memory-safety test.
  const std::string valid = serialize_safetensors({{"w", Tensor::normal({3, 4})},
                                                   {"ids", Tensor::arange(5)},
                                                   {"m", Tensor::from_values({1, 0, 1}, {3}, DType::Bool)}},
                                                  {{"epoch", "3"}});
  uint64_t header_bytes;
  std::memcpy(&header_bytes, valid.data(), 8);
  Generator g(2024);
  int refused = 0, loaded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = valid;
    switch (g.next_below(5)) {
      case 0:  // truncate
        bytes.resize(g.next_below(bytes.size()));
        break;
      case 1:  // flip a few bytes, mostly in the header
        for (uint64_t k = 0, n = 1 + g.next_below(4); k < n; ++k) {
          const size_t at = g.next_below(2) ? 8 + g.next_below(header_bytes) : g.next_below(bytes.size());
          bytes[at] = static_cast<char>(g.next_below(256));
        }
        break;
      case 2: {  // a random header length, often huge or just off
        uint64_t n = g.next_below(2) ? g.next_u64() : header_bytes + g.next_below(16) - 8;
        std::memcpy(bytes.data(), &n, 8);
        break;
      }
      case 3:  // delete a stretch of the header
        bytes.erase(8 + g.next_below(header_bytes), 1 + g.next_below(8));
        break;
      case 4:  // replace a header character with JSON punctuation
        bytes[8 + g.next_below(header_bytes)] = "{}[]\",:-0e"[g.next_below(10)];
        break;
    }
    try {
      const SafetensorsFile f = parse_safetensors(bytes, "mutant.safetensors");
      ++loaded;
      size_t total = 0;
      for (const auto& [name, t] : f.tensors)
        total += static_cast<size_t>(t.numel()) * element_size(t.dtype());
      BOOST_REQUIRE(total <= bytes.size());
    } catch (const Error& e) {
      ++refused;
      BOOST_REQUIRE(std::string(e.what()).rfind("load_safetensors: mutant.safetensors: ", 0) == 0);
    }
  }
  BOOST_TEST(refused > 15000);
  BOOST_TEST(loaded > 100);  // flipped data bytes, for one, leave a valid file
}

BOOST_AUTO_TEST_SUITE_END()
