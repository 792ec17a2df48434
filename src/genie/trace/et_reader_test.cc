// EtReader / EtWriter: write-then-read round trips, gzip, and every corruption the reader must
// report (never crash on): truncated files, bad varints, random bytes, gzip of garbage.
#include "genie/trace/et_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "genie/trace/attributes.h"
#include "genie/trace/et_writer.h"
#include "tests/support/temp_dir.h"

namespace genie::trace {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

class EtReaderTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  void WriteBytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  TempDir tmp_{"et-reader"};
  fs::path dir_ = tmp_.path();
};

// Nodes exercising every field and several attribute kinds.
std::vector<ChakraProtoMsg::Node> SampleNodes() {
  std::vector<ChakraProtoMsg::Node> nodes;
  for (int i = 0; i < 50; ++i) {
    ChakraProtoMsg::Node n;
    n.set_id(static_cast<uint64_t>(1000 - i * 7));  // not in id order
    n.set_name("node_" + std::to_string(i));
    n.set_type(static_cast<ChakraProtoMsg::NodeType>(i % 8));
    if (i > 0) n.add_data_deps(static_cast<uint64_t>(1000 - (i - 1) * 7));
    if (i > 1) n.add_ctrl_deps(static_cast<uint64_t>(1000 - (i - 2) * 7));
    n.set_start_time_micros(static_cast<uint64_t>(i) * 10);
    n.set_duration_micros(static_cast<uint64_t>(i));
    n.mutable_inputs()->set_values("[1, 2]");
    n.mutable_outputs()->set_shapes("[[4]]");
    AddInt64(&n, "comm_size", int64_t{1} << (i % 40));
    AddUint64(&n, "tensor_size", static_cast<uint64_t>(i) << 33);
    AddBool(&n, "is_cpu_op", i % 2 == 0);
    AddString(&n, "pg_name", std::to_string(i % 3) + ".0");
    AddBoolList(&n, "involved_dim", {true, false, i % 2 == 1});
    nodes.push_back(n);
  }
  return nodes;
}

void WriteAll(const std::string& path, const std::vector<ChakraProtoMsg::Node>& nodes, bool gz) {
  auto writer = EtWriter::Create(path, DefaultMetadata(), gz);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (const auto& n : nodes) ASSERT_TRUE((*writer)->Write(n).ok());
  ASSERT_TRUE((*writer)->Close().ok());
}

std::vector<ChakraProtoMsg::Node> ReadAll(const std::string& path, Status* status) {
  std::vector<ChakraProtoMsg::Node> nodes;
  auto reader = EtReader::Open(path);
  if (!reader.ok()) {
    *status = reader.status();
    return nodes;
  }
  while (true) {
    ChakraProtoMsg::Node n;
    uint64_t offset = 0;
    auto have = (*reader)->Next(&n, &offset);
    if (!have.ok()) {
      *status = have.status();
      return nodes;
    }
    if (!*have) break;
    nodes.push_back(n);
  }
  *status = Status::Ok();
  return nodes;
}

TEST_F(EtReaderTest, RoundTripIsIdentical) {
  for (bool gz : {false, true}) {
    std::string path = Path(gz ? "rt_gz.0.et" : "rt.0.et");
    auto nodes = SampleNodes();
    WriteAll(path, nodes, gz);
    Status status;
    auto back = ReadAll(path, &status);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(back.size(), nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_EQ(back[i].SerializeAsString(), nodes[i].SerializeAsString()) << "node " << i;
    }
    auto reader = EtReader::Open(path);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ((*reader)->gzipped(), gz);
    EXPECT_EQ((*reader)->metadata().version(), "0.0.4");
  }
  // gzip and plain files carry the same messages.
  Status s1, s2;
  auto a = ReadAll(Path("rt.0.et"), &s1);
  auto b = ReadAll(Path("rt_gz.0.et"), &s2);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(ReadBytes(Path("rt.0.et")).substr(0, 2), std::string("\x07\x0a", 2));
  EXPECT_EQ(ReadBytes(Path("rt_gz.0.et")).substr(0, 2), std::string("\x1f\x8b", 2));
}

TEST_F(EtReaderTest, ReadAtReturnsTheSameBytesAsSequentialReading) {
  std::string path = Path("ra.0.et");
  WriteAll(path, SampleNodes(), true);
  auto reader = EtReader::Open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<std::pair<uint64_t, std::string>> seen;
  std::string bytes;
  uint64_t offset = 0;
  while (*(*reader)->NextRaw(&bytes, &offset)) seen.emplace_back(offset, bytes);
  ASSERT_EQ(seen.size(), 50u);
  for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
    std::string again;
    ASSERT_TRUE((*reader)->ReadAt(it->first, static_cast<uint32_t>(it->second.size()), &again).ok());
    EXPECT_EQ(again, it->second);
  }
  (*reader)->Rewind();
  ASSERT_TRUE(*(*reader)->NextRaw(&bytes, &offset));
  EXPECT_EQ(bytes, seen[0].second);
}

TEST_F(EtReaderTest, ReadsShippedMicrobenchmark) {
  Status status;
  auto nodes = ReadAll(std::string(GENIE_DATA_DIR) +
                           "/traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce.5.et",
                       &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].id(), 5u);
  EXPECT_EQ(nodes[0].name(), "all_reduce_8npus_1MB");
  EXPECT_EQ(nodes[0].type(), ChakraProtoMsg::COMM_COLL_NODE);
}

TEST_F(EtReaderTest, TruncatedFilesAreErrorsNamingFileAndOffset) {
  std::string path = Path("full.0.et");
  WriteAll(path, SampleNodes(), false);
  std::string bytes = ReadBytes(path);
  int truncated_errors = 0;
  // Every prefix: either a clean read of fewer nodes (cut at a message boundary) or an error.
  for (size_t len = 1; len < bytes.size(); len += 13) {
    std::string cut = Path("cut" + std::to_string(len) + ".0.et");
    WriteBytes(cut, bytes.substr(0, len));
    Status status;
    auto nodes = ReadAll(cut, &status);
    if (!status.ok()) {
      EXPECT_NE(status.message().find(cut), std::string::npos) << status.message();
      EXPECT_NE(status.message().find("byte"), std::string::npos) << status.message();
      if (status.message().find("truncated") != std::string::npos) ++truncated_errors;
    }
    EXPECT_LT(nodes.size(), 50u);
  }
  EXPECT_GT(truncated_errors, 10);
  // Cut inside the last message: the error says truncated and where that message starts.
  WriteBytes(Path("cut2.0.et"), bytes.substr(0, bytes.size() - 3));
  Status status;
  auto nodes = ReadAll(Path("cut2.0.et"), &status);
  EXPECT_EQ(nodes.size(), 49u);
  EXPECT_NE(status.message().find("truncated trace"), std::string::npos) << status.message();
}

TEST_F(EtReaderTest, EmptyFileAndBadVarint) {
  WriteBytes(Path("empty.0.et"), "");
  Status status;
  ReadAll(Path("empty.0.et"), &status);
  EXPECT_NE(status.message().find("empty trace"), std::string::npos) << status.message();

  std::string bytes = std::string("\x07\x0a\x05" "0.0.4", 8) + std::string(11, '\xff');
  WriteBytes(Path("varint.0.et"), bytes);
  ReadAll(Path("varint.0.et"), &status);
  EXPECT_NE(status.message().find("bad varint32"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("byte 8"), std::string::npos) << status.message();

  // A length above the limit.
  bytes = std::string("\x07\x0a\x05" "0.0.4", 8) + std::string("\xff\xff\xff\xff\x0f", 5);
  WriteBytes(Path("huge.0.et"), bytes);
  ReadAll(Path("huge.0.et"), &status);
  EXPECT_NE(status.message().find("exceeds"), std::string::npos) << status.message();

  EXPECT_EQ(EtReader::Open(Path("nope.0.et")).status().code(), Status::Code::kNotFound);
}

TEST_F(EtReaderTest, RandomBytesAndGzipOfGarbageGiveErrorsNotCrashes) {
  std::mt19937 rng(1234);
  int errors = 0;
  for (int round = 0; round < 200; ++round) {
    std::string bytes(1 + rng() % 600, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string path = Path("random" + std::to_string(round) + ".0.et");
    WriteBytes(path, bytes);
    Status status;
    ReadAll(path, &status);
    if (!status.ok()) ++errors;
  }
  EXPECT_GT(errors, 150);

  // Valid gzip wrapping garbage: inflates, then fails to parse.
  std::string path = Path("gzgarbage.0.et");
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  std::string garbage(5000, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() | 0x80);
  gzwrite(gz, garbage.data(), static_cast<unsigned>(garbage.size()));
  gzclose(gz);
  Status status;
  ReadAll(path, &status);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();

  // A gzip header followed by garbage: corrupt stream.
  WriteBytes(Path("badgz.0.et"), std::string("\x1f\x8b\x08\x00", 4) + garbage.substr(0, 100));
  ReadAll(Path("badgz.0.et"), &status);
  EXPECT_NE(status.message().find("gzip"), std::string::npos) << status.message();

  // A truncated gzip stream.
  std::string good = Path("good.0.et");
  WriteAll(good, SampleNodes(), true);
  std::string gzbytes = ReadBytes(good);
  WriteBytes(Path("gzcut.0.et"), gzbytes.substr(0, gzbytes.size() / 2));
  ReadAll(Path("gzcut.0.et"), &status);
  EXPECT_NE(status.message().find("gzip"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace genie::trace
