#include "minigrad/tensor/file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "minigrad/tensor/error.h"

namespace minigrad {

namespace fs = std::filesystem;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// ---- the test hook ----

std::mutex hook_mutex;
std::function<void(std::string_view)> write_step_hook;

void step(std::string_view name) {
  std::function<void(std::string_view)> hook;
  {
    std::lock_guard lock(hook_mutex);
    hook = write_step_hook;
  }
  if (hook) hook(name);
}

// A name no other writer uses at the same time: this process's id, a counter, and the clock.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(static_cast<uint64_t>(now) % 1000000007u);
}

// "a/b/model" for "a/b/model/" and "a/b/model/.": the name to create beside, never an empty filename.
fs::path normalized(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p;
}

fs::path parent_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

void fsync_folder(std::string_view op, const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error(op, "cannot open the folder " + dir.string() + " to flush it: " + errno_text());
  FdCloser closer{fd};
  if (::fsync(fd) != 0) throw Error(op, "cannot flush the folder " + dir.string() + ": " + errno_text());
}

// Creates `file` (which must not exist), writes `bytes` and flushes them to the disk.
void write_new_file(std::string_view op, const fs::path& file, std::string_view bytes) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(op, "cannot create " + file.string() + ": " + errno_text());
  FdCloser closer{fd};
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(op, "writing " + file.string() + " failed: " + errno_text());
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) throw Error(op, "flushing " + file.string() + " to the disk failed: " + errno_text());
}

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

// Creates the folder `parent` if needed and proves that files can be created in it.
void check_parent_writable(std::string_view op, const fs::path& target) {
  const fs::path parent = parent_of(target);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    throw Error(
        op, "cannot create the folder " + parent.string() + " for " + target.string() + ": " + ec.message());
  const fs::path probe = parent / ("." + target.filename().string() + ".probe-" + unique_suffix());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(op, "cannot write " + target.string() + ": cannot create files in " + parent.string() + ": " +
                        errno_text());
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// reading

ReadableFile::ReadableFile(std::string_view op, const std::string& path) : op_(op), path_(path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw Error(op, path + ": cannot open the file: " + errno_text());
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const std::string reason = errno_text();
    ::close(fd_);
    throw Error(op, path + ": cannot read its size: " + reason);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(op, path + (S_ISDIR(st.st_mode) ? ": is a folder, not a file"
                                                : ": is not a regular file (a FIFO, socket or device)"));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

ReadableFile::~ReadableFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ReadableFile::read_at(uint64_t offset, void* out, uint64_t count) const {
  auto* p = static_cast<char*>(out);
  while (count > 0) {
    const ssize_t n = ::pread(fd_, p, count, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(op_, path_ + ": read error: " + errno_text());
    if (n == 0)
      throw Error(op_, path_ + ": the file ends at byte " + std::to_string(offset) +
                           " (did it change while being read?)");
    p += n;
    offset += static_cast<uint64_t>(n);
    count -= static_cast<uint64_t>(n);
  }
}

std::string read_file(std::string_view op, const std::string& path, uint64_t max_bytes) {
  const ReadableFile file(op, path);
  if (file.size() > max_bytes) {
    throw Error(op, path + ": " + std::to_string(file.size()) + " bytes, more than the limit of " +
                        std::to_string(max_bytes));
  }
  std::string bytes(file.size(), '\0');
  file.read_at(0, bytes.data(), bytes.size());
  return bytes;
}

// ---------------------------------------------------------------------------------------------------
// writing

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const std::string op = "write " + path;
  const fs::path target = normalized(path);
  const fs::path parent = parent_of(target);
  const fs::path temporary = parent / ("." + target.filename().string() + ".tmp-" + unique_suffix());
  try {
    step("write temporary");
    write_new_file(op, temporary, bytes);
    step("rename");
    if (::rename(temporary.c_str(), target.c_str()) != 0) {
      throw Error(op, "cannot rename " + temporary.string() + " into place: " + errno_text());
    }
  } catch (...) {
    remove_quietly(temporary);
    throw;
  }
  step("fsync folder");
  fsync_folder(op, parent);
}

void write_folder_atomically(const std::string& dir, const std::vector<FolderFile>& files) {
  const std::string op = "save " + dir;
  const fs::path target = normalized(dir);
  const fs::path parent = parent_of(target);
  const std::string name = target.filename().string();
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec))
    throw Error(op, "it exists and is not a folder");
  for (const auto& [file, bytes] : files) {
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos) {
      throw ValueError(op, "'" + file + "' is not a plain file name");
    }
  }
  fs::create_directories(parent, ec);
  if (ec) throw Error(op, "cannot create the folder " + parent.string() + ": " + ec.message());

  // 1. The new folder, complete and on the disk, under a name no one else uses.
  const fs::path temporary = parent / ("." + name + ".tmp-" + unique_suffix());
  step("create temporary");
  if (::mkdir(temporary.c_str(), 0755) != 0)
    throw Error(op, "cannot create " + temporary.string() + ": " + errno_text());
  try {
    for (const auto& [file, bytes] : files) {
      step("write " + file);
      write_new_file(op, temporary / file, bytes);
    }
    step("fsync temporary");
    fsync_folder(op, temporary);
  } catch (...) {
    remove_quietly(temporary);
    throw;
  }

  // 2. The swap: one rename, after which `target` is the new folder.
  fs::path old;  // where the old folder ends up, to be deleted
  try {
    step("swap");
    if (!fs::exists(target, ec)) {
      if (::rename(temporary.c_str(), target.c_str()) != 0)
        throw Error(op, "cannot rename the new folder into place: " + errno_text());
    } else if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      old = temporary;  // the exchange left the old folder under the temporary name
    } else if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
      // No RENAME_EXCHANGE on this file system: move the old folder aside, then the new one in.
      old = parent / ("." + name + ".old-" + unique_suffix());
      if (::rename(target.c_str(), old.c_str()) != 0)
        throw Error(op, "cannot move the old folder aside: " + errno_text());
      step("rename in");
      if (::rename(temporary.c_str(), target.c_str()) != 0) {
        const std::string reason = errno_text();
        ::rename(old.c_str(), target.c_str());  // put the old one back
        throw Error(op, "cannot rename the new folder into place: " + reason);
      }
    } else {
      throw Error(op, "cannot swap the new folder in: " + errno_text());
    }
  } catch (...) {
    if (old.empty() || old != temporary) remove_quietly(temporary);
    throw;
  }
  step("fsync parent");
  fsync_folder(op, parent);
  // 3. The old folder is no longer reachable under `target`: delete it. A failure here loses nothing.
  if (!old.empty()) {
    step("remove old");
    remove_quietly(old);
  }
}

void check_folder_writable(std::string_view op, const std::string& dir) {
  const fs::path target = normalized(dir);
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    throw Error(op, target.string() + " exists and is not a folder");
  }
  check_parent_writable(op, target);
}

void check_file_writable(std::string_view op, const std::string& path) {
  const fs::path target = normalized(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw Error(op, target.string() + " is a folder, not a file");
  check_parent_writable(op, target);
}

// ---------------------------------------------------------------------------------------------------
// locking

FolderLock::FolderLock(const std::string& dir) {
  const std::string op = "lock " + dir;
  const fs::path target = normalized(dir);
  const fs::path lock = parent_of(target) / (target.filename().string() + ".lock");
  std::error_code ec;
  fs::create_directories(parent_of(target), ec);
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(op, "cannot create the lock file " + lock.string() + ": " + errno_text());
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {};
    [[maybe_unused]] const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK) {
      throw Error(op, "another run is writing to it (process " + std::string(holder[0] ? holder : "?") +
                          " holds " + lock.string() + ")");
    }
    throw Error(op, "cannot lock " + lock.string() + ": " + std::strerror(error));
  }
  // Say who holds it, for the message another run prints. If this fails, that message only lacks the pid.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) return;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

namespace testing {
void set_write_step_hook(std::function<void(std::string_view step)> hook) {
  std::lock_guard lock(hook_mutex);
  write_step_hook = std::move(hook);
}
}  // namespace testing

}  // namespace minigrad
