// EtReader: reads one Chakra execution-trace file (<prefix>.<rank>.et) as a sequence of
// varint32-length-delimited protobuf messages: one GlobalMetadata, then Nodes until EOF.
// A gzip-compressed file (first bytes 1f 8b) is inflated once, at Open, into an anonymous
// temporary file, so that memory stays small and nodes can be re-read by offset later; byte
// offsets in errors then refer to the uncompressed stream. Errors name the file and byte offset.
// Owns its file descriptor. One thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "et_def.pb.h"
#include "genie/common/status.h"

namespace genie::trace {

class EtReader {
 public:
  // Opens `path`, inflating gzip, and reads the GlobalMetadata message.
  static Result<std::unique_ptr<EtReader>> Open(const std::string& path);
  ~EtReader();
  EtReader(const EtReader&) = delete;
  EtReader& operator=(const EtReader&) = delete;

  const std::string& path() const { return path_; }
  bool gzipped() const { return gzipped_; }
  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }

  // Sequential access: the next node message's raw bytes and the byte offset of its payload.
  // Returns false at a clean end of file; an error for a truncated message or bad varint.
  Result<bool> NextRaw(std::string* bytes, uint64_t* offset);
  // Same, parsed. A message that is not a valid Node is an error naming the offset.
  Result<bool> Next(ChakraProtoMsg::Node* node, uint64_t* offset);
  // Random access to a payload seen before (offset/size as returned by NextRaw). Served from a
  // read-ahead window (kWindowBytes) so that reading nodes in roughly file order costs one
  // system call per window, not one per node.
  Status ReadAt(uint64_t offset, uint32_t size, std::string* bytes);
  static constexpr size_t kWindowBytes = 256u << 10;
  // Restarts sequential reading at the first node.
  void Rewind();

  // Largest message accepted; a length above it is treated as corruption.
  static constexpr uint32_t kMaxMessageBytes = 64u << 20;

 private:
  EtReader(std::string path, int fd, bool gzipped);
  // Fills the buffer so that at least `n` bytes are available if the file has them.
  Status Fill(size_t n);
  Result<bool> ReadVarint32(uint32_t* value);

  std::string path_;
  int fd_ = -1;
  bool gzipped_ = false;
  ChakraProtoMsg::GlobalMetadata metadata_;
  uint64_t first_node_offset_ = 0;
  uint64_t file_size_ = 0;  // uncompressed bytes

  // Sequential read buffer: bytes [buf_pos_, buf_end_) of buf_ are file bytes starting at
  // file offset buf_file_offset_ + buf_pos_.
  std::string buf_;
  size_t buf_pos_ = 0;
  size_t buf_end_ = 0;
  uint64_t buf_file_offset_ = 0;
  bool eof_ = false;

  // Random-access window: file bytes [window_offset_, window_offset_ + window_.size()).
  std::string window_;
  uint64_t window_offset_ = 0;
};

// Describes a node for error messages: "file.et: node 12 at byte 345".
std::string NodeWhere(const std::string& path, uint64_t node_id, uint64_t offset);

}  // namespace genie::trace
