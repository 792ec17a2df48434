// ExternalSorter: sorts records (a fixed-size key and a text payload) in bounded memory, so that
// an output ordered unlike its input — results.json by (iteration, rank, node), the Chrome trace
// by (rank, track, start) — can be written from millions of ops without holding them. Records
// stay in memory up to about `memory_bytes`; past that each batch is sorted and appended to a
// scratch file as one run, and Finish() merges the runs (one buffered reader per run). Equal
// keys come out in the order they were added. The scratch file is removed when the sorter is
// destroyed. Owned by one writer; not thread-safe.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "genie/common/status.h"

namespace genie::report {

template <typename Key>
class ExternalSorter {
  static_assert(std::is_trivially_copyable_v<Key>, "keys are spilled as bytes");

 public:
  using Emit = std::function<Status(const Key&, std::string_view)>;

  ExternalSorter(std::string scratch_path, size_t memory_bytes)
      : scratch_path_(std::move(scratch_path)), memory_bytes_(memory_bytes) {}
  ~ExternalSorter() {
    if (spill_ != nullptr) std::fclose(spill_);
    if (!runs_.empty() || spill_ != nullptr) std::remove(scratch_path_.c_str());
  }
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  Status Add(const Key& key, std::string_view payload) {
    if (recs_.capacity() == 0) {
      // Reserved once and reused run after run (never regrown), so memory stays within the
      // budget: a doubling string or vector could otherwise touch twice what it holds.
      arena_.reserve(memory_bytes_ / 4 * 3);
      recs_.reserve(std::max<size_t>(1, memory_bytes_ / 4 / sizeof(Rec)));
    }
    if (!recs_.empty() &&
        (recs_.size() == recs_.capacity() || arena_.size() + payload.size() > arena_.capacity())) {
      GENIE_RETURN_IF_ERROR(Spill());
    }
    recs_.push_back({key, seq_++, arena_.size(), payload.size()});
    arena_.append(payload);
    return Status::Ok();
  }

  // Calls emit(key, payload) for every record in key order; stops at the first error.
  Status Finish(const Emit& emit) {
    if (runs_.empty()) {
      SortBatch();
      for (const Rec& r : recs_) {
        GENIE_RETURN_IF_ERROR(emit(r.key, std::string_view(arena_).substr(r.off, r.len)));
      }
      return Status::Ok();
    }
    if (!recs_.empty()) GENIE_RETURN_IF_ERROR(Spill());
    std::fclose(spill_);
    spill_ = nullptr;
    return Merge(emit);
  }

  size_t runs() const { return runs_.size(); }

 private:
  struct Rec {
    Key key;
    uint64_t seq;
    size_t off, len;
  };
  struct Head {  // a run's next record on disk: key, seq, payload length, payload
    Key key;
    uint64_t seq;
    uint64_t len;
  };
  struct Run {
    long offset = 0;
    uint64_t count = 0;
  };

  void SortBatch() {
    std::sort(recs_.begin(), recs_.end(), [](const Rec& a, const Rec& b) {
      if (a.key < b.key) return true;
      if (b.key < a.key) return false;
      return a.seq < b.seq;
    });
  }

  Status Fail(const char* what) const {
    return Status::IoError(fmt::format("{} the scratch file {}: {} (check the space in its folder)",
                                       what, scratch_path_, std::strerror(errno)));
  }

  Status Spill() {
    if (spill_ == nullptr) {
      spill_ = std::fopen(scratch_path_.c_str(), "wb");
      if (spill_ == nullptr) return Fail("cannot create");
    }
    SortBatch();
    Run run{std::ftell(spill_), recs_.size()};
    for (const Rec& r : recs_) {
      Head h{r.key, r.seq, r.len};
      if (std::fwrite(&h, sizeof h, 1, spill_) != 1 ||
          (r.len > 0 && std::fwrite(arena_.data() + r.off, 1, r.len, spill_) != r.len)) {
        return Fail("cannot write");
      }
    }
    runs_.push_back(run);
    recs_.clear();
    arena_.clear();
    return Status::Ok();
  }

  Status Merge(const Emit& emit) {
    struct Reader {
      std::FILE* f = nullptr;
      uint64_t left = 0;
      Head head{};
      std::string payload;
      std::unique_ptr<char[]> buf;
      ~Reader() {
        if (f != nullptr) std::fclose(f);
      }
    };
    std::vector<std::unique_ptr<Reader>> readers;
    auto next = [&](Reader& r) -> Status {
      if (r.left == 0) return Status::Ok();
      if (std::fread(&r.head, sizeof r.head, 1, r.f) != 1) return Fail("cannot read");
      r.payload.resize(r.head.len);
      if (r.head.len > 0 && std::fread(r.payload.data(), 1, r.head.len, r.f) != r.head.len) {
        return Fail("cannot read");
      }
      --r.left;
      return Status::Ok();
    };
    using Item = std::pair<Reader*, size_t>;
    auto later = [](const Item& a, const Item& b) {
      const Head& x = a.first->head;
      const Head& y = b.first->head;
      if (y.key < x.key) return true;
      if (x.key < y.key) return false;
      return x.seq > y.seq;
    };
    std::priority_queue<Item, std::vector<Item>, decltype(later)> heap(later);
    for (const Run& run : runs_) {
      auto r = std::make_unique<Reader>();
      r->f = std::fopen(scratch_path_.c_str(), "rb");
      if (r->f == nullptr) return Fail("cannot open");
      r->buf = std::make_unique<char[]>(kReadBuffer);
      std::setvbuf(r->f, r->buf.get(), _IOFBF, kReadBuffer);
      if (std::fseek(r->f, run.offset, SEEK_SET) != 0) return Fail("cannot seek in");
      r->left = run.count;
      GENIE_RETURN_IF_ERROR(next(*r));
      heap.push({r.get(), readers.size()});
      readers.push_back(std::move(r));
    }
    // Each run holds at least one record, so every reader starts with a head.
    while (!heap.empty()) {
      Item top = heap.top();
      heap.pop();
      Reader& r = *top.first;
      GENIE_RETURN_IF_ERROR(emit(r.head.key, r.payload));
      if (r.left > 0) {
        GENIE_RETURN_IF_ERROR(next(r));
        heap.push(top);
      }
    }
    return Status::Ok();
  }

  static constexpr size_t kReadBuffer = 64 << 10;
  std::string scratch_path_;
  size_t memory_bytes_;
  std::vector<Rec> recs_;
  std::string arena_;
  uint64_t seq_ = 0;
  std::FILE* spill_ = nullptr;
  std::vector<Run> runs_;
};

}  // namespace genie::report
