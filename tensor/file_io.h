// Files that survive crashes and files that may be hostile.
//
// Writing: a reader never sees half of a file or half of a folder. A file's bytes go to a uniquely named
// temporary file beside the target, are flushed to the disk (fsync), and the temporary is renamed over
// the target; a folder (a checkpoint: weights, config, vocabulary) is written complete under a temporary
// name beside the target and then swapped in with one rename. A crash at any instant leaves the target
// path holding either the complete old version or the complete new one; what it can leave besides is a
// temporary named ".NAME.tmp-*" beside it, which nothing reads.
//
// Reading: a file may come from anywhere. Only regular files are read (a directory, a FIFO or a device
// such as /dev/zero is refused before any byte is read, so nothing blocks or runs out of memory), and
// their size is checked against a limit first. Every failure is a minigrad::Error naming the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minigrad {

// ---- reading ----

// An open regular file, for reading parts of it at known offsets (see load_safetensors).
class ReadableFile {
 public:
  // Opens `path` for reading; throws an Error from `op` if it is missing, unreadable or not a regular
  // file (a directory, a FIFO, a device).
  ReadableFile(std::string_view op, const std::string& path);
  ~ReadableFile();
  ReadableFile(const ReadableFile&) = delete;
  ReadableFile& operator=(const ReadableFile&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly `count` bytes at `offset` into `out`; throws if the file ends first or a read fails.
  void read_at(uint64_t offset, void* out, uint64_t count) const;

 private:
  std::string op_, path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The whole of a regular file of at most `max_bytes` bytes.
std::string read_file(std::string_view op, const std::string& path, uint64_t max_bytes = uint64_t{1} << 30);

// ---- writing ----

// Writes `bytes` to `path` through a temporary file that is fsynced and renamed into place (and the
// folder fsynced after). Throws minigrad::Error naming the file and the reason if any step fails; the
// temporary file is removed.
void write_file_atomically(const std::string& path, std::string_view bytes);

// One file of a folder written by write_folder_atomically: a name inside the folder and its bytes.
using FolderFile = std::pair<std::string, std::string>;

// Replaces the folder `dir` with a folder holding exactly `files`, atomically: the new folder is written
// and fsynced under a unique temporary name beside `dir`, then exchanged with the old one in a single
// rename (Linux's renameat2 RENAME_EXCHANGE; where the file system lacks it, the old folder is renamed
// aside first, so a crash between the two renames leaves it there as ".NAME.old-*"). The old folder is
// then deleted. Serialise everything into `files` before calling: nothing that can fail for a reason of
// the data's own happens once the swap has begun.
void write_folder_atomically(const std::string& dir, const std::vector<FolderFile>& files);

// Fails before any work if `dir` cannot be written by write_folder_atomically: it is a file, or the
// folder it would go in cannot be created or written to. Creates that parent folder if needed.
void check_folder_writable(std::string_view op, const std::string& dir);
// Fails before any work if the file `path` cannot be created or replaced.
void check_file_writable(std::string_view op, const std::string& path);

// An exclusive lock on a folder that is about to be written, held for the object's lifetime: a second
// process (or a second lock in this one) that asks for the same folder fails at once with a message
// naming it and the process that holds it. The lock is the file "DIR.lock" beside the folder (not inside
// it: the folder itself is replaced by write_folder_atomically); it is left in place, empty of meaning,
// when the lock is released. Locks held by a process that died are released by the kernel.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

namespace testing {
// Called with the name of each step of write_file_atomically and write_folder_atomically ("create
// temporary", "write config.json", "fsync config.json", "swap", ...) just before the step runs. Tests
// throw from it to simulate a crash or a failure at that step. Pass nullptr to remove it.
void set_write_step_hook(std::function<void(std::string_view step)> hook);
}  // namespace testing

}  // namespace minigrad
