#include "genie/trace/et_writer.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace genie::trace {

ChakraProtoMsg::GlobalMetadata DefaultMetadata() {
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  return metadata;
}

Result<std::unique_ptr<EtWriter>> EtWriter::Create(const std::string& path,
                                                   const ChakraProtoMsg::GlobalMetadata& metadata,
                                                   bool gzip, int gzip_level) {
  std::unique_ptr<EtWriter> writer(new EtWriter(path, gzip));
  if (gzip) {
    if (gzip_level < 1 || gzip_level > 9) {
      return Status::InvalidArgument(path + ": gzip level " + std::to_string(gzip_level) +
                                     " is outside 1..9");
    }
    const std::string mode = "wb" + std::to_string(gzip_level);
    writer->gz_ = gzopen(path.c_str(), mode.c_str());
    if (writer->gz_ == nullptr) {
      return Status::IoError(path + ": cannot create: " + std::strerror(errno));
    }
  } else {
    writer->file_ = std::fopen(path.c_str(), "wb");
    if (writer->file_ == nullptr) {
      return Status::IoError(path + ": cannot create: " + std::strerror(errno) +
                             " (does the output folder exist and is it writable?)");
    }
  }
  GENIE_RETURN_IF_ERROR(writer->WriteMessage(metadata));
  return writer;
}

EtWriter::~EtWriter() { (void)Close(); }

Status EtWriter::WriteBytes(const char* data, size_t size) {
  if (gzip_) {
    if (gzwrite(static_cast<gzFile>(gz_), data, static_cast<unsigned>(size)) !=
        static_cast<int>(size)) {
      return Status::IoError(path_ + ": gzip write failed");
    }
  } else if (std::fwrite(data, 1, size, file_) != size) {
    return Status::IoError(path_ + ": write failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status EtWriter::WriteMessage(const google::protobuf::MessageLite& message) {
  if (gz_ == nullptr && file_ == nullptr) return Status::Internal(path_ + ": writer is closed");
  scratch_.clear();
  if (!message.AppendToString(&scratch_)) {
    return Status::InvalidArgument(path_ + ": message cannot be serialised");
  }
  // varint32 length prefix, as Chakra's encode_message / protobuf's delimited format.
  char len[5];
  size_t n = 0;
  auto v = static_cast<uint32_t>(scratch_.size());
  while (v >= 0x80) {
    len[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  len[n++] = static_cast<char>(v);
  GENIE_RETURN_IF_ERROR(WriteBytes(len, n));
  return WriteBytes(scratch_.data(), scratch_.size());
}

Status EtWriter::Write(const ChakraProtoMsg::Node& node) {
  GENIE_RETURN_IF_ERROR(WriteMessage(node));
  ++nodes_;
  return Status::Ok();
}

Status EtWriter::Close() {
  Status status;
  if (gz_ != nullptr) {
    if (gzclose(static_cast<gzFile>(gz_)) != Z_OK) status = Status::IoError(path_ + ": gzip close failed");
    gz_ = nullptr;
  }
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0) {
      status = Status::IoError(path_ + ": close failed: " + std::strerror(errno));
    }
    file_ = nullptr;
  }
  return status;
}

}  // namespace genie::trace
