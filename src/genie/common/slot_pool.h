// SlotPool: values of one kind in a vector, each found by a 32-bit slot index that can travel
// as an event's argument (no closure, no allocation per item once warm); a taken slot is reused
// by the next Put, last freed first. Not thread-safe: one owner's thread.
#pragma once

#include <cstdint>
#include <vector>

namespace genie {

template <typename T>
class SlotPool {
 public:
  // Stores `value` and returns its slot.
  uint32_t Put(const T& value) {
    if (free_.empty()) {
      items_.push_back(value);
      return static_cast<uint32_t>(items_.size() - 1);
    }
    const uint32_t slot = free_.back();
    free_.pop_back();
    items_[slot] = value;
    return slot;
  }
  // The value in `slot`, which stays taken.
  T& At(uint32_t slot) { return items_[slot]; }
  // Frees `slot` (its value stays until the next Put reuses it).
  void Free(uint32_t slot) { free_.push_back(slot); }
  // The value in `slot`, which is free again.
  T Take(uint32_t slot) {
    free_.push_back(slot);
    return items_[slot];
  }

 private:
  std::vector<T> items_;
  std::vector<uint32_t> free_;
};

}  // namespace genie
