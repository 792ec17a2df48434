#include "genie/trace/et_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace genie::trace {
namespace {

constexpr size_t kBufferBytes = 256 << 10;

std::string Errno() { return std::strerror(errno); }

// protobuf prints parse complaints (e.g. invalid UTF-8 in a node name) straight to stderr;
// genie reports the failed parse itself, naming file and offset, so route these to debug logs.
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  if (level >= google::protobuf::LOGLEVEL_FATAL) {
    spdlog::critical("protobuf {}:{}: {}", file, line, message);
  } else {
    spdlog::debug("protobuf {}:{}: {}", file, line, message);
  }
}

void QuietProtobufOnce() {
  static const bool done = [] {
    google::protobuf::SetLogHandler(&ProtobufLog);
    return true;
  }();
  (void)done;
}

// Inflates gzip `path` into an unlinked temporary file; returns its descriptor.
Result<int> Inflate(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return Status::IoError(path + ": cannot open gzip stream: " + Errno());
  gzbuffer(gz, 1 << 17);
  const char* tmpdir = std::getenv("TMPDIR");
  std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string templ = dir + "/genie-et-XXXXXX";
    fd = ::mkstemp(templ.data());
    if (fd >= 0) ::unlink(templ.c_str());
  }
  if (fd < 0) {
    gzclose(gz);
    return Status::IoError(path + ": cannot create a temporary file in " + dir +
                           " to inflate the gzip trace: " + Errno() + " (set TMPDIR)");
  }
  std::string chunk(1 << 17, '\0');
  uint64_t total = 0;
  while (true) {
    int n = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(gz, &err);
      gzclose(gz);
      ::close(fd);
      return Status::Corruption(path + ": gzip data is corrupt after " + std::to_string(total) +
                                " uncompressed bytes: " + msg);
    }
    if (n == 0) break;
    const char* p = chunk.data();
    size_t left = static_cast<size_t>(n);
    while (left > 0) {
      ssize_t w = ::write(fd, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        gzclose(gz);
        ::close(fd);
        return Status::IoError(path + ": writing the inflated trace to " + dir + ": " + Errno());
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
    total += static_cast<uint64_t>(n);
  }
  // gzread stops quietly at a truncated stream; gzclose_r reports it.
  int rc = gzclose_r(gz);
  if (rc != Z_OK && rc != Z_BUF_ERROR) {
    ::close(fd);
    return Status::Corruption(path + ": gzip stream is corrupt (zlib error " + std::to_string(rc) +
                              ")");
  }
  if (rc == Z_BUF_ERROR) {
    ::close(fd);
    return Status::Corruption(path + ": gzip stream is truncated after " + std::to_string(total) +
                              " uncompressed bytes");
  }
  return fd;
}

}  // namespace

std::string NodeWhere(const std::string& path, uint64_t node_id, uint64_t offset) {
  return path + ": node " + std::to_string(node_id) + " at byte " + std::to_string(offset);
}

EtReader::EtReader(std::string path, int fd, bool gzipped)
    : path_(std::move(path)), fd_(fd), gzipped_(gzipped) {}

EtReader::~EtReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<EtReader>> EtReader::Open(const std::string& path) {
  QuietProtobufOnce();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::NotFound(path + ": cannot open trace: " + Errno() +
                            " (check the workload path)");
  }
  unsigned char magic[2] = {0, 0};
  ssize_t got = ::pread(fd, magic, 2, 0);
  bool gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (gz) {
    ::close(fd);
    GENIE_ASSIGN_OR_RETURN(fd, Inflate(path));
  }
  std::unique_ptr<EtReader> reader(new EtReader(path, fd, gz));
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::IoError(path + ": cannot stat: " + Errno());
  reader->file_size_ = static_cast<uint64_t>(st.st_size);
  // A small file gets a buffer of its size: a simulation opens one reader per rank, and
  // 1,024 ranks x 256 KiB of zero-filled buffer was a quarter of `genie simulate`'s time and
  // memory for a one-collective trace. Fill() grows it for a larger message.
  const size_t want =
      reader->file_size_ > 0
          ? static_cast<size_t>(std::min<uint64_t>(reader->file_size_ + 16, kBufferBytes))
          : kBufferBytes;
  reader->buf_.resize(want);
  std::string bytes;
  uint64_t offset = 0;
  GENIE_ASSIGN_OR_RETURN(bool have, reader->NextRaw(&bytes, &offset));
  if (!have) {
    return Status::Corruption(path + ": empty trace (no GlobalMetadata message); " +
                              "regenerate the file or remove it from the workload");
  }
  if (!reader->metadata_.ParseFromString(bytes)) {
    return Status::Corruption(path + ": byte " + std::to_string(offset) +
                              ": first message is not a Chakra GlobalMetadata (not an ET file?)");
  }
  reader->first_node_offset_ = reader->buf_file_offset_ + reader->buf_pos_;
  return reader;
}

Status EtReader::Fill(size_t n) {
  if (buf_end_ - buf_pos_ >= n || eof_) return Status::Ok();
  // Slide the unread bytes to the front, then read more.
  size_t unread = buf_end_ - buf_pos_;
  if (buf_pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + buf_pos_, unread);
    buf_file_offset_ += buf_pos_;
    buf_pos_ = 0;
    buf_end_ = unread;
  }
  if (buf_.size() < n) buf_.resize(n);
  while (buf_end_ < n) {
    ssize_t r = ::pread(fd_, buf_.data() + buf_end_, buf_.size() - buf_end_,
                        static_cast<off_t>(buf_file_offset_ + buf_end_));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(path_ + ": read failed at byte " +
                             std::to_string(buf_file_offset_ + buf_end_) + ": " + Errno());
    }
    if (r == 0) {
      eof_ = true;
      break;
    }
    buf_end_ += static_cast<size_t>(r);
  }
  return Status::Ok();
}

Result<bool> EtReader::ReadVarint32(uint32_t* value) {
  GENIE_RETURN_IF_ERROR(Fill(10));
  uint64_t start = buf_file_offset_ + buf_pos_;
  if (buf_pos_ == buf_end_) return false;
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (buf_pos_ == buf_end_) {
      return Status::Corruption(path_ + ": byte " + std::to_string(start) +
                                ": file ends inside a message length (truncated trace)");
    }
    auto c = static_cast<unsigned char>(buf_[buf_pos_++]);
    v |= static_cast<uint64_t>(c & 0x7f) << (7 * i);
    if (c < 0x80) {
      if (v > 0xffffffffull) break;
      *value = static_cast<uint32_t>(v);
      return true;
    }
  }
  return Status::Corruption(path_ + ": byte " + std::to_string(start) +
                            ": bad varint32 message length (corrupt or not a Chakra ET file)");
}

Result<bool> EtReader::NextRaw(std::string* bytes, uint64_t* offset) {
  uint32_t size = 0;
  uint64_t len_offset = buf_file_offset_ + buf_pos_;
  GENIE_ASSIGN_OR_RETURN(bool have, ReadVarint32(&size));
  if (!have) return false;
  if (size > kMaxMessageBytes) {
    return Status::Corruption(path_ + ": byte " + std::to_string(len_offset) + ": message length " +
                              std::to_string(size) + " exceeds the " +
                              std::to_string(kMaxMessageBytes >> 20) +
                              " MiB limit (corrupt or not a Chakra ET file)");
  }
  // Check against the file size first so a corrupt length never allocates a large buffer.
  uint64_t remaining = file_size_ - std::min(file_size_, buf_file_offset_ + buf_pos_);
  if (size > remaining) {
    return Status::Corruption(path_ + ": byte " + std::to_string(len_offset) + ": message of " +
                              std::to_string(size) + " bytes but only " +
                              std::to_string(remaining) + " remain (truncated trace)");
  }
  GENIE_RETURN_IF_ERROR(Fill(size));
  if (buf_end_ - buf_pos_ < size) {
    return Status::Corruption(path_ + ": byte " + std::to_string(len_offset) + ": message of " +
                              std::to_string(size) + " bytes but only " +
                              std::to_string(buf_end_ - buf_pos_) +
                              " remain (truncated trace)");
  }
  *offset = buf_file_offset_ + buf_pos_;
  bytes->assign(buf_.data() + buf_pos_, size);
  buf_pos_ += size;
  return true;
}

Result<bool> EtReader::Next(ChakraProtoMsg::Node* node, uint64_t* offset) {
  std::string bytes;
  GENIE_ASSIGN_OR_RETURN(bool have, NextRaw(&bytes, offset));
  if (!have) return false;
  if (!node->ParseFromString(bytes)) {
    return Status::Corruption(path_ + ": byte " + std::to_string(*offset) +
                              ": message is not a valid Chakra Node");
  }
  return true;
}

Status EtReader::ReadAt(uint64_t offset, uint32_t size, std::string* bytes) {
  if (offset >= window_offset_ && offset + size <= window_offset_ + window_.size()) {
    bytes->assign(window_.data() + (offset - window_offset_), size);
    return Status::Ok();
  }
  // Refill the window from `offset` (at least `size` bytes, more when the file has them).
  size_t want = std::max<size_t>(kWindowBytes, size);
  if (offset < file_size_) want = std::min<uint64_t>(want, std::max<uint64_t>(file_size_ - offset, size));
  window_.resize(want);
  window_offset_ = offset;
  size_t done = 0;
  while (done < want) {
    ssize_t r = ::pread(fd_, window_.data() + done, want - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      window_.clear();
      return Status::IoError(path_ + ": read failed at byte " + std::to_string(offset + done) +
                             ": " + Errno());
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  window_.resize(done);
  if (done < size) {
    window_.clear();
    return Status::IoError(path_ + ": file shrank while reading byte " +
                           std::to_string(offset + done) + " (was it rewritten during the run?)");
  }
  bytes->assign(window_.data(), size);
  return Status::Ok();
}

void EtReader::Rewind() {
  buf_file_offset_ = first_node_offset_;
  buf_pos_ = buf_end_ = 0;
  eof_ = false;
}

}  // namespace genie::trace
