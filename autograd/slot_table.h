// The engine's table from graph node to slot: the index of the node's gradient in a backward pass's
// vector of gradients. Read it as std::unordered_map<const Node*, size_t>; it is written out because
// that map allocates once per entry, which on a chain of tiny ops was a fifth of the whole backward pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace minigrad {
struct Node;
}  // namespace minigrad

namespace minigrad::detail {

// Slots are numbered in order of insertion. An open-addressing hash table (linear probing) in one vector.
class SlotTable {
 public:
  // The node's slot, and whether it was added just now.
  std::pair<size_t, bool> insert(const Node* node) {
    if (2 * (size_ + 1) > cells_.size()) grow();  // at most half full: probes stay short
    Cell& cell = find(node);
    if (cell.node == node) return {cell.slot, false};
    cell = {node, size_++};
    return {cell.slot, true};
  }
  // The slot of a node already inserted.
  size_t at(const Node* node) const { return const_cast<SlotTable*>(this)->find(node).slot; }
  size_t size() const { return size_; }

 private:
  struct Cell {
    const Node* node = nullptr;
    size_t slot = 0;
  };

  // The node's cell, or the empty cell where it would go.
  Cell& find(const Node* node) {
    const size_t mask = cells_.size() - 1;  // the size is a power of two
    // Fibonacci hashing of the address (its low bits are alignment zeros).
    size_t i = (reinterpret_cast<uintptr_t>(node) * 0x9E3779B97F4A7C15ull >> 20) & mask;
    while (cells_[i].node != nullptr && cells_[i].node != node) i = (i + 1) & mask;
    return cells_[i];
  }

  void grow() {
    std::vector<Cell> old = std::exchange(cells_, std::vector<Cell>(2 * cells_.size()));
    for (const Cell& cell : old) {
      if (cell.node != nullptr) find(cell.node) = cell;
    }
  }

  std::vector<Cell> cells_ = std::vector<Cell>(64);
  size_t size_ = 0;
};

}  // namespace minigrad::detail
