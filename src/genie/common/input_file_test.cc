#include "genie/common/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace genie {
namespace {

namespace fs = std::filesystem;

TEST(InputFile, OnlyAReadableRegularFileIsAnInput) {
  const fs::path dir = fs::temp_directory_path() / ("genie_input_file_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "folder");
  std::ofstream(dir / "ok.yml") << "x";
  fs::create_symlink(dir / "ok.yml", dir / "link.yml");
  fs::create_symlink(dir / "gone.yml", dir / "dangling.yml");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  EXPECT_TRUE(CheckInputFile((dir / "ok.yml").string(), "network config").ok());
  EXPECT_TRUE(CheckInputFile((dir / "link.yml").string(), "network config").ok());
  struct Case {
    const char* name;
    Status::Code code;
    const char* says;
  };
  for (const Case& c : {Case{"folder", Status::Code::kInvalidArgument, "is a folder"},
                        Case{"fifo", Status::Code::kInvalidArgument, "is a FIFO"},
                        Case{"dangling.yml", Status::Code::kNotFound, "dangling symbolic link"},
                        Case{"missing.yml", Status::Code::kNotFound, "cannot read"}}) {
    const std::string path = (dir / c.name).string();
    Status st = CheckInputFile(path, "network config");
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_EQ(st.code(), c.code) << c.name;
    EXPECT_EQ(st.message().rfind(path + ": ", 0), 0u) << st.message();
    EXPECT_NE(st.message().find("the network config"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(c.says), std::string::npos) << st.message();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace genie
