// The safetensors format: exact bytes, round trips, and the refusal of every kind of bad file.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
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
  BOOST_TEST(&f.at("i64") == f.find("i64"));  // at: the tensor, or an error naming the file and the name
  expect_error<IndexError>(
      [&] { f.at("weight"); },
      "SafetensorsFile::at: roundtrip_test.safetensors: no tensor named 'weight'; it holds "
      "f64, f32, i64, bool, empty");
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
  // A text file (here the start of a config.json) is named as one, not read as a length of 8 quintillion.
  expect_rejected("{\n  \"vocab_size\": 100\n}\n",
                  "not a safetensors file: it begins with the text \"{\\n  \"voc\", where a safetensors file "
                  "begins with its header's length in 8 bytes");
  expect_rejected(file_bytes(" {}", ""), "the header does not start with '{'");
  expect_error_containing<Error>([&] { parse_safetensors(file_bytes("{\"a\": ", ""), "t"); },
                                 "load_safetensors: t: the header is not valid JSON");
  expect_error_containing<Error>([&] { parse_safetensors(file_bytes("{\"\xff\": 1}", ""), "t"); },
                                 "the header is not valid JSON");  // not UTF-8
  // One tensor over the 8 bytes of data, its fields wrong one way each, and the reason given.
  const std::pair<std::string, std::string> bad_fields[] = {
      {R"("dtype": "Q8", "shape": [2], "data_offsets": [0, 8])", "tensor 'a': unknown dtype 'Q8'"},
      {R"("dtype": "F16", "shape": [4], "data_offsets": [0, 8])",
       "tensor 'a': dtype F16 is not supported by minigrad"},
      {R"("dtype": "F32", "shape": [-2], "data_offsets": [0, 8])",
       "tensor 'a': shape entries must be non-negative integers"},
      {R"("dtype": "F32", "shape": [3], "data_offsets": [0, 8])",
       "tensor 'a': data_offsets cover 8 bytes but F32 [3] needs 12"},
      {R"("dtype": "F32", "shape": [2], "data_offsets": [8, 0])",
       "tensor 'a': data_offsets end before they begin"},
      {R"("dtype": "F32", "shape": [1], "data_offsets": [4, 8])",
       "tensor 'a' starts at byte 4 of the data, expected 0 (a gap)"}};
  for (const auto& [fields, reason] : bad_fields)
    expect_rejected(file_bytes(R"({"a": {)" + fields + "}}", data), reason);
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

BOOST_AUTO_TEST_CASE(a_key_twice_at_any_level_is_refused) {
  // nlohmann's parser keeps the last of two equal keys; a file that says two things is ambiguous.
  const std::string data = float_bytes({1, 2});
  expect_rejected(
      file_bytes(R"({"a": {"dtype": "F64", "dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", data),
      "the key 'dtype' appears twice in one object");
  expect_rejected(file_bytes(R"({"__metadata__": {"k": "1", "k": "2"}})", ""),
                  "the key 'k' appears twice in one object");
  expect_rejected(file_bytes(R"({"a": {"dtype": "F32", "shape": [[2]], "data_offsets": [0, 8]}})", data),
                  "the header nests deeper than the format's three levels");
}

BOOST_AUTO_TEST_CASE(shapes_whose_sizes_overflow_are_refused) {
  // [0, 2^62, 2^62] holds no element, but its strides (2^124) cannot exist: refused by name, not a UBSan
  // report or a tensor with no storage.
  expect_rejected(
      file_bytes(
          R"({"a": {"dtype": "F32", "shape": [0, 4611686018427387904, 4611686018427387904], "data_offsets": [0, 0]}})",
          ""),
      "tensor 'a': shape [0,4611686018427387904,4611686018427387904] is too large: its element count "
      "overflows 64 bits");
  // 2^61 float32 elements: the count fits, the byte count does not.
  expect_rejected(
      file_bytes(R"({"a": {"dtype": "F32", "shape": [2305843009213693952], "data_offsets": [0, 8]}})", ""),
      "tensor 'a': shape [2305843009213693952] is too large: its element count overflows 64 bits");
}

BOOST_AUTO_TEST_CASE(special_files_are_refused_before_a_byte_is_read) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("minigrad_special_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  expect_error<Error>([&] { load_safetensors(dir.string()); },
                      "load_safetensors: " + dir.string() + ": is a folder, not a file");
  expect_error<Error>([] { load_safetensors("/dev/zero"); },
                      "load_safetensors: /dev/zero: is not a regular file (a FIFO, socket or device)");
  const std::filesystem::path fifo = dir / "fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  expect_error<Error>(
      [&] { load_safetensors(fifo.string()); },
      "load_safetensors: " + fifo.string() + ": is not a regular file (a FIFO, socket or device)");
  // A 1 TiB sparse file: only its first bytes are read (the whole would not fit in memory).
  const std::filesystem::path sparse = dir / "sparse";
  std::ofstream(sparse).close();
  std::filesystem::resize_file(sparse, uint64_t{1} << 40);
  expect_error<Error>([&] { load_safetensors(sparse.string()); },
                      "load_safetensors: " + sparse.string() + ": the header does not start with '{'");
  // A valid header before a terabyte of zeros: the data does not match what the header declares.
  {
    const std::string head =
        file_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", "");
    std::fstream f(sparse, std::ios::in | std::ios::out | std::ios::binary);
    f.write(head.data(), static_cast<std::streamsize>(head.size()));
  }
  const uint64_t data_bytes =
      (uint64_t{1} << 40) -
      (file_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", "").size());
  expect_error<Error>([&] { load_safetensors(sparse.string()); },
                      "load_safetensors: " + sparse.string() +
                          ": the tensors cover 8 bytes of data but the file holds " +
                          std::to_string(data_bytes));
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(a_header_of_many_entries_parses_in_linear_time) {
  // 100,000 empty tensors (a 6 MB header). The parser this replaced rescanned the whole object after
  // every entry: about 70 s here for this file, where a linear parse takes well under one. This is a
  // bound against a hang, not a speed measurement: it allows 30 times the linear time under a sanitizer.
  std::string header = "{";
  constexpr int kEntries = 100000;
  for (int i = 0; i < kEntries; ++i) {
    header += (i ? ", \"t" : "\"t") + std::to_string(i) +
              R"(": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]})";
  }
  header += "}";
  const auto start = std::chrono::steady_clock::now();
  const SafetensorsFile file = parse_safetensors(file_bytes(header, ""), "many.safetensors");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(file.tensors.size() == size_t{kEntries});
  BOOST_TEST(seconds < 30.0);
}

BOOST_AUTO_TEST_SUITE_END()
