// EtWriter: writes a Chakra execution-trace file the way Chakra's own tools do: one
// varint32-length-delimited GlobalMetadata, then one delimited Node per call, optionally
// gzip-compressed as a whole. Used by `genie gen` and by tests that build traces. Owns the
// output file until Close(). One thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "et_def.pb.h"
#include "genie/common/status.h"

namespace genie::trace {

class EtWriter {
 public:
  // Creates (truncates) `path` and writes `metadata` as the first message. `gzip_level` 1
  // (fastest) to 9 (smallest); `genie synth` writes thousands of files and takes 1.
  static Result<std::unique_ptr<EtWriter>> Create(const std::string& path,
                                                  const ChakraProtoMsg::GlobalMetadata& metadata,
                                                  bool gzip = false, int gzip_level = 6);
  ~EtWriter();
  EtWriter(const EtWriter&) = delete;
  EtWriter& operator=(const EtWriter&) = delete;

  Status Write(const ChakraProtoMsg::Node& node);
  // Flushes and closes; errors (disk full) surface here. Called by the destructor if needed.
  Status Close();
  uint64_t nodes_written() const { return nodes_; }

 private:
  EtWriter(std::string path, bool gzip) : path_(std::move(path)), gzip_(gzip) {}
  Status WriteMessage(const google::protobuf::MessageLite& message);
  Status WriteBytes(const char* data, size_t size);

  std::string path_;
  bool gzip_ = false;
  void* gz_ = nullptr;       // gzFile when gzip_
  std::FILE* file_ = nullptr;
  std::string scratch_;
  uint64_t nodes_ = 0;
};

// The GlobalMetadata genie writes ("0.0.4", as ASTRA-sim's shipped microbenchmarks carry).
ChakraProtoMsg::GlobalMetadata DefaultMetadata();

}  // namespace genie::trace
