#include "minigrad/viz/dot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "minigrad/tensor/file_io.h"
#include "minigrad/viz/graph_view.h"

extern char** environ;

namespace minigrad {

std::string to_dot(const Variable& root) {
  if (!root.defined()) throw ValueError("to_dot", "the Variable is undefined");
  const GraphView view = view_graph(root);
  std::ostringstream out;
  out << "digraph minigrad {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t v = 0; v < view.vertices.size(); ++v) {
    const GraphView::Vertex& vertex = view.vertices[v];
    const std::string shape = describe(vertex.shape, vertex.dtype);
    out << "  v" << v;
    switch (vertex.kind) {
      case GraphView::Kind::Op:
        out << " [shape=box, style=rounded, label=\"" << vertex.name << "\\n"
            << shape << (vertex.node->released() ? "\\n(freed)" : "") << "\"];\n";
        break;
      case GraphView::Kind::Leaf:
        out << " [shape=ellipse, style=filled, fillcolor=\"#cfe2ff\", label=\"" << vertex.name << "\\n"
            << shape << "\\nrequires_grad\"];\n";
        break;
      case GraphView::Kind::Constant:
        out << " [shape=ellipse, style=dashed, label=\"constant\\n" << shape << "\"];\n";
        break;
    }
  }
  for (const GraphView::Edge& edge : view.edges) out << "  v" << edge.from << " -> v" << edge.to << ";\n";
  out << "}\n";
  return out.str();
}

void write_dot(const Variable& root, const std::string& path) {
  write_file_atomically(path, to_dot(root));
}

namespace {

// A file in $TMPDIR (or /tmp) holding `text`, removed when this goes.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& text) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/minigrad-dot-XXXXXX";
    const int fd = mkstemp(path_.data());
    if (fd < 0) {
      path_.clear();
      return;
    }
    written_ = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
  }
  ~TemporaryFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  bool ok() const { return !path_.empty() && written_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool written_ = false;
};

}  // namespace

std::optional<std::string> run_dot(const std::string& graph, const std::string& format) {
  const TemporaryFile input(graph);
  int out[2];
  if (!input.ok() || pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  // dot's standard output into the pipe, its errors to /dev/null.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string dot = "dot", type = "-T" + format, path = input.path();
  char* argv[] = {dot.data(), type.data(), path.data(), nullptr};
  pid_t pid;
  const int spawned = posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string printed;
  if (spawned == 0) {
    char buffer[4096];
    for (ssize_t got; (got = read(out[0], buffer, sizeof buffer)) != 0;) {
      if (got > 0)
        printed.append(buffer, static_cast<size_t>(got));
      else if (errno != EINTR)
        break;
    }
  }
  close(out[0]);
  if (spawned != 0) return std::nullopt;  // not on PATH
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return printed;
}

}  // namespace minigrad
