// Files that survive crashes and files that may be hostile (tensor/file_io.h).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "minigrad/tensor/file_io.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
namespace fs = std::filesystem;

namespace {

// A fresh folder for one test, removed afterwards.
struct Scratch {
  fs::path root = fs::temp_directory_path() / ("minigrad_file_io_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Scratch() {
    minigrad::testing::set_write_step_hook(nullptr);
    fs::remove_all(root);
  }
};

std::map<std::string, std::string> read_folder(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = read_file("test", entry.path().string());
  }
  return files;
}

// Names in `dir` other than the ones given: temporaries left behind.
std::vector<std::string> strays(const fs::path& dir, const std::vector<std::string>& expected) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (std::find(expected.begin(), expected.end(), name) == expected.end()) out.push_back(name);
  }
  return out;
}

struct SimulatedCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(file_io)

BOOST_AUTO_TEST_CASE(only_regular_files_are_read_and_the_error_names_the_file) {
  Scratch s;
  expect_error<Error>([&] { read_file("load", s.root.string()); },
                      "load: " + s.root.string() + ": is a folder, not a file");
  expect_error<Error>([] { read_file("load", "/dev/zero"); },
                      "load: /dev/zero: is not a regular file (a FIFO, socket or device)");
  // A FIFO with no writer: opening it for reading would block forever without O_NONBLOCK.
  const fs::path fifo = s.root / "fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  expect_error<Error>([&] { read_file("load", fifo.string()); },
                      "load: " + fifo.string() + ": is not a regular file (a FIFO, socket or device)");
  expect_error<Error>(
      [&] { read_file("load", (s.root / "missing").string()); },
      "load: " + (s.root / "missing").string() + ": cannot open the file: No such file or directory");
  // Larger than the limit: refused from its size, before a byte is read.
  std::ofstream(s.root / "big") << std::string(100, 'x');
  expect_error<Error>([&] { read_file("load", (s.root / "big").string(), 99); },
                      "load: " + (s.root / "big").string() + ": 100 bytes, more than the limit of 99");
  BOOST_TEST(read_file("load", (s.root / "big").string(), 100) == std::string(100, 'x'));
}

BOOST_AUTO_TEST_CASE(an_atomic_write_leaves_no_temporary_even_when_it_fails) {
  Scratch s;
  const std::string target = (s.root / "a.txt").string();
  write_file_atomically(target, "old");
  for (const char* step : {"write temporary", "rename", "fsync folder"}) {
    minigrad::testing::set_write_step_hook([step](std::string_view now) {
      if (now == step) throw SimulatedCrash(step);
    });
    BOOST_CHECK_THROW(write_file_atomically(target, "new"), SimulatedCrash);
    // Before the rename the old file is intact; after it, the new one is complete.
    const std::string now = read_file("test", target);
    BOOST_TEST((now == (std::string(step) == "fsync folder" ? "new" : "old")), "after a crash at " << step);
    BOOST_TEST(strays(s.root, {"a.txt"}).empty(), "a temporary was left after a failure at " << step);
    minigrad::testing::set_write_step_hook(nullptr);
    write_file_atomically(target, "old");
  }
}

BOOST_AUTO_TEST_CASE(a_folder_is_replaced_whole_at_every_step_of_a_save) {
  // A crash (or a failure) at any step of a save leaves the target as the complete old folder or the
  // complete new one, never a mix: the old checkpoint stays loadable until the new one is complete.
  Scratch s;
  const fs::path target = s.root / "checkpoint";
  const std::vector<FolderFile> old_files = {{"config.json", "{old}"}, {"model.bin", "old weights"}};
  const std::vector<FolderFile> new_files = {
      {"config.json", "{new}"}, {"model.bin", "new weights"}, {"vocab.json", "[new]"}};
  const std::map<std::string, std::string> old_map(old_files.begin(), old_files.end());
  const std::map<std::string, std::string> new_map(new_files.begin(), new_files.end());

  // The steps of one save, in order, as the hook sees them.
  write_folder_atomically(target.string(), old_files);
  std::vector<std::string> steps;
  minigrad::testing::set_write_step_hook([&](std::string_view step) { steps.emplace_back(step); });
  write_folder_atomically(target.string(), new_files);
  minigrad::testing::set_write_step_hook(nullptr);
  BOOST_TEST(read_folder(target) == new_map);
  BOOST_REQUIRE(std::find(steps.begin(), steps.end(), "swap") != steps.end());

  for (size_t k = 0; k < steps.size(); ++k) {
    write_folder_atomically(target.string(), old_files);
    bool swapped = false;  // whether the crash comes after the swap
    for (size_t i = 0; i < k; ++i) swapped |= steps[i] == "swap";
    size_t count = 0;  // (the hook is copied at each call: the count lives out here)
    minigrad::testing::set_write_step_hook([&](std::string_view) {
      if (count++ == k) throw SimulatedCrash(steps[k]);
    });
    BOOST_CHECK_THROW(write_folder_atomically(target.string(), new_files), SimulatedCrash);
    minigrad::testing::set_write_step_hook(nullptr);
    BOOST_TEST((read_folder(target) == (swapped ? new_map : old_map)),
               "after a crash at '" << steps[k] << "'");
    // Before the swap a failure cleans up after itself; after it, what a crash would leave (the old
    // folder under its temporary name) is a hidden ".checkpoint.tmp-*" that nothing reads.
    for (const std::string& stray : strays(s.root, {"checkpoint"})) {
      BOOST_TEST(swapped, "stray " << stray << " after a failure at '" << steps[k] << "'");
      BOOST_TEST(stray.rfind(".checkpoint.tmp-", 0) == 0);
      fs::remove_all(s.root / stray);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_folder_save_refuses_bad_targets_before_writing) {
  Scratch s;
  std::ofstream(s.root / "file") << "x";
  expect_error<Error>(
      [&] {
        write_folder_atomically((s.root / "file").string(), {{"a", "b"}});
      },
      "save " + (s.root / "file").string() + ": it exists and is not a folder");
  expect_error<ValueError>(
      [&] {
        write_folder_atomically((s.root / "d").string(), {{"../a", "b"}});
      },
      "save " + (s.root / "d").string() + ": '../a' is not a plain file name");
  // A folder whose parent cannot exist (it would have to be inside a file).
  expect_error_containing<Error>([&] { check_folder_writable("train", (s.root / "file" / "out").string()); },
                                 "train: cannot create the folder " + (s.root / "file").string());
  expect_error<Error>([&] { check_folder_writable("train", (s.root / "file").string()); },
                      "train: " + (s.root / "file").string() + " exists and is not a folder");
  expect_error<Error>([&] { check_file_writable("plot", s.root.string()); },
                      "plot: " + s.root.string() + " is a folder, not a file");
  check_folder_writable("train", (s.root / "new" / "out").string());  // creates the parent, writes nothing
  BOOST_TEST(fs::is_directory(s.root / "new"));
  BOOST_TEST(fs::is_empty(s.root / "new"));
  BOOST_TEST(strays(s.root, {"file", "new"}).empty());
}

BOOST_AUTO_TEST_CASE(a_second_writer_of_a_folder_is_refused_at_once) {
  Scratch s;
  const std::string out = (s.root / "out").string();
  {
    FolderLock first(out);
    expect_error<Error>([&] { FolderLock second(out); },
                        "lock " + out + ": another run is writing to it (process " +
                            std::to_string(::getpid()) + " holds " + out + ".lock)");
    FolderLock other((s.root / "other").string());  // another folder is free
  }
  FolderLock again(out);  // released with the first
}

BOOST_AUTO_TEST_SUITE_END()
