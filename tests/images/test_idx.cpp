// Reading Fashion-MNIST's IDX files: the values of a small file written here, and an error naming the
// file and what is wrong for a missing, corrupted or truncated one. The same for the PGM images the
// example's predict reads.
#define BOOST_TEST_MODULE minigrad images
#include <zlib.h>
#include <boost/test/unit_test.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "examples/images/idx.h"
#include "examples/images/pgm.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
namespace fs = std::filesystem;

namespace {

// A scratch folder for this test process, removed at the end.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("minigrad_idx_" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

std::string big_endian(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// An IDX file's bytes: the magic number, the sizes, then the values.
std::string idx(uint32_t magic, const std::vector<uint32_t>& sizes, const std::string& values) {
  std::string bytes = big_endian(magic);
  for (uint32_t s : sizes) bytes += big_endian(s);
  return bytes + values;
}

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(images_and_labels_are_read_as_pytorch_would_scale_them) {
  Scratch scratch;
  // Two images of 2×3 pixels: 0, 51, 102, 153, 204, 255 and their reverse.
  const std::string pixels = {0,
                              51,
                              102,
                              static_cast<char>(153),
                              static_cast<char>(204),
                              static_cast<char>(255),
                              static_cast<char>(255),
                              static_cast<char>(204),
                              static_cast<char>(153),
                              102,
                              51,
                              0};
  write_gzip(scratch.path("images.gz"), idx(0x803, {2, 2, 3}, pixels));
  write_gzip(scratch.path("labels.gz"), idx(0x801, {2}, {7, 9}));
  const Tensor images = images::read_idx_images(scratch.path("images.gz"));
  BOOST_TEST(images.shape() == Shape({2, 1, 2, 3}));
  expect_close(images.select(0, 0), {0, 0.2, 0.4, 0.6, 0.8, 1}, 1e-7);
  expect_close(images.select(0, 1), {1, 0.8, 0.6, 0.4, 0.2, 0}, 1e-7);
  expect_equal(images::read_idx_labels(scratch.path("labels.gz")), {7, 9});
}

BOOST_AUTO_TEST_CASE(a_bad_file_is_named_with_what_is_wrong) {
  Scratch scratch;
  const std::string missing = scratch.path("no-such-file.gz");
  expect_error<Error>([&] { images::read_idx_images(missing); }, "read_idx: " + missing + ": no such file");

  write_gzip(scratch.path("swapped.gz"), idx(0x801, {2}, {1, 2}));  // a labels file read as images
  expect_error<Error>([&] { images::read_idx_images(scratch.path("swapped.gz")); },
                      "read_idx: " + scratch.path("swapped.gz") +
                          ": magic number 0x00000801, expected 0x00000803 (IDX images)");

  write_gzip(scratch.path("short.gz"), idx(0x803, {3, 2, 2}, std::string(10, 'x')));  // 12 bytes promised
  expect_error<Error>([&] { images::read_idx_images(scratch.path("short.gz")); },
                      "read_idx: " + scratch.path("short.gz") +
                          ": the header promises 3×2×2 bytes of images data, the file holds 10 (truncated)");

  // Sizes whose product overflows 64 bits (65536 · 2^24 · 2^24 = 2^64) promise more than any file holds.
  write_gzip(scratch.path("huge.gz"), idx(0x803, {65536, 1u << 24, 1u << 24}, ""));
  expect_error<Error>(
      [&] { images::read_idx_images(scratch.path("huge.gz")); },
      "read_idx: " + scratch.path("huge.gz") +
          ": the header promises 65536×16777216×16777216 bytes of images data, the file holds 0 "
          "(truncated)");

  write_gzip(scratch.path("header.gz"), std::string(2, '\0'));
  expect_error_containing<Error>([&] { images::read_idx_labels(scratch.path("header.gz")); },
                                 "too short for an IDX labels header of 8");

  write_gzip(scratch.path("label.gz"), idx(0x801, {3}, {1, 10, 2}));
  expect_error<Error>(
      [&] { images::read_idx_labels(scratch.path("label.gz")); },
      "read_idx: " + scratch.path("label.gz") + ": label 10 at index 1 is not below 10 classes");

  // A gzip stream cut short, as a download that stopped: zlib's own complaint, after the file's name.
  write_gzip(scratch.path("whole.gz"), idx(0x803, {4, 28, 28}, std::string(4 * 28 * 28, 'p')));
  const std::string whole = read_file(scratch.path("whole.gz"));
  std::ofstream(scratch.path("cut.gz"), std::ios::binary) << whole.substr(0, whole.size() / 2);
  expect_error_containing<Error>([&] { images::read_idx_images(scratch.path("cut.gz")); },
                                 scratch.path("cut.gz") + ": not a valid gzip stream");
}

BOOST_AUTO_TEST_CASE(pgm_images_round_trip_and_bad_ones_are_named) {
  Scratch scratch;
  // Written, then read back: 8-bit values, so each pixel comes back within half a step of 1/255.
  const Tensor image = Tensor::from_vector(std::vector<float>{0.0f, 0.25f, 0.5f, 1.0f, 0.75f, 0.1f}, {2, 3});
  images::write_pgm(scratch.path("a.pgm"), image);
  BOOST_TEST(read_file(scratch.path("a.pgm")).substr(0, 11) == "P5\n3 2\n255\n");
  const Tensor back = images::read_pgm(scratch.path("a.pgm"));
  BOOST_TEST(back.shape() == (Shape{2, 3}));
  const std::vector<float> a = image.to_vector<float>(), b = back.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) BOOST_TEST(std::abs(a[i] - b[i]) <= 0.5f / 255 + 1e-6f);
  // The plain form, with a comment and a maxval of 4.
  std::ofstream(scratch.path("plain.pgm")) << "P2\n# a comment\n2 1\n4\n1 4\n";
  BOOST_TEST(
      images::read_pgm(scratch.path("plain.pgm")).to_vector<float>() == (std::vector<float>{0.25f, 1.0f}),
      boost::test_tools::per_element());

  std::ofstream(scratch.path("png.pgm")) << "\x89PNG\r\n";
  expect_error<Error>(
      [&] { images::read_pgm(scratch.path("png.pgm")); },
      "read_pgm: " + scratch.path("png.pgm") + ": not a PGM image (it starts with neither P5 nor P2)");
  std::ofstream(scratch.path("short.pgm")) << "P5\n3 2\n255\nabc";
  expect_error<Error>([&] { images::read_pgm(scratch.path("short.pgm")); },
                      "read_pgm: " + scratch.path("short.pgm") +
                          ": 3 bytes after the header, too few for the 3×2 pixels it "
                          "promises (truncated)");
  // A header that promises 30000×30000 pixels is refused before anything is allocated for them.
  std::ofstream(scratch.path("huge.pgm")) << "P5 30000 30000 255\nabc";
  expect_error<Error>(
      [&] { images::read_pgm(scratch.path("huge.pgm")); },
      "read_pgm: " + scratch.path("huge.pgm") +
          ": 3 bytes after the header, too few for the 30000×30000 pixels it promises (truncated)");
  // A pixel above maxval is refused in P5 as in P2.
  std::ofstream(scratch.path("above.pgm")) << "P5\n2 1\n4\n\x01\x05";
  expect_error<Error>(
      [&] { images::read_pgm(scratch.path("above.pgm")); },
      "read_pgm: " + scratch.path("above.pgm") + ": pixel 1 is 5, above the header's maxval 4");
  std::ofstream(scratch.path("big.pgm")) << "P2\n2 1\n4\n1 5\n";
  expect_error<Error>([&] { images::read_pgm(scratch.path("big.pgm")); },
                      "read_pgm: " + scratch.path("big.pgm") + ": pixel 1 is missing or not in 0..4");
  expect_error<Error>([&] { images::read_pgm(scratch.path("none.pgm")); },
                      "read_pgm: " + scratch.path("none.pgm") + ": cannot open the file");
}
