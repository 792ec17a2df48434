// The model file and the model's sizes: what a file names is what it claims, a key above
// `preset:` is kept, and every size the emitters form is checked against 64 bits (issue 47).
#include "genie/synth/model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/synth/gpu.h"
#include "genie/synth/job.h"
#include "genie/synth/layout.h"

namespace genie::synth {
namespace {

namespace fs = std::filesystem;

TEST(ModelFile, KeysAbovePresetAreKeptAndASecondPresetIsRefused) {
  ModelSpec m;
  ASSERT_TRUE(ApplyModelFile("layers: 3\nvocab: 5000\npreset: stg-gpt\n", "m.yml", &m).ok());
  EXPECT_EQ(m.layers, 3);
  EXPECT_EQ(m.vocab, 5000);
  EXPECT_EQ(m.name, "stg-gpt");
  EXPECT_EQ(m.hidden, 1024);  // the preset's
  Status two = ApplyModelFile("preset: stg-gpt\nlayers: 2\npreset: llama3-8b\n", "m.yml", &m);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.message().find("m.yml:3: a second preset (the first is on line 1)"),
            std::string::npos)
      << two.message();
  Status unknown = ApplyModelFile("preset: nope\n", "m.yml", &m);
  EXPECT_NE(unknown.message().find("m.yml:1: unknown model preset 'nope'"), std::string::npos)
      << unknown.message();
}

TEST(ModelFile, AFileThatIsNoFileIsRefusedNamingIt) {
  const fs::path dir = fs::temp_directory_path() / ("genie_model_file_" + std::to_string(getpid()));
  fs::create_directories(dir / "model.yml");
  ModelSpec m;
  Status folder = LoadModelFile((dir / "model.yml").string(), &m);
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(folder.message().find((dir / "model.yml").string() + ": the model file is a folder"),
            std::string::npos)
      << folder.message();
  EXPECT_FALSE(LoadModelFile((dir / "missing.yml").string(), &m).ok());
  std::ofstream(dir / "ok.yml") << "preset: stg-gpt\nlayers: 2\n";
  ASSERT_TRUE(LoadModelFile((dir / "ok.yml").string(), &m).ok());
  EXPECT_EQ(m.layers, 2);
  fs::remove_all(dir);
}

TEST(ModelSizes, EveryProductThatWouldOverflowNamesTheFieldToReduce) {
  auto preset = ModelPreset("stg-gpt");
  ASSERT_TRUE(preset.ok());
  struct Case {
    int64_t ModelSpec::*field;
    int64_t value;
    const char* flag;
  };
  for (const Case& c : {Case{&ModelSpec::vocab, 9'000'000'000'000'000'000, "--vocab"},
                        Case{&ModelSpec::ffn, int64_t{1} << 50, "--ffn"},
                        Case{&ModelSpec::global_batch, int64_t{1} << 60, "--global-batch"},
                        Case{&ModelSpec::seq, int64_t{1} << 40, "--seq"}}) {
    ModelSpec m = *preset;
    m.*c.field = c.value;
    Status st = Validate(m);
    if (st.ok()) {  // some products need the layout's tokens: Job::Make checks those
      auto gpu = GpuPreset("h100");
      ASSERT_TRUE(gpu.ok());
      auto job = Job::Make(m, Layout{}, *gpu);
      ASSERT_FALSE(job.ok()) << c.flag;
      st = job.status();
    }
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.flag;
    EXPECT_NE(st.message().find("does not fit in 64 bits"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(c.flag), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("; reduce "), std::string::npos) << st.message();
  }
  // Every preset still fits, with its own tokens.
  for (const auto& name : ModelPresetNames()) {
    auto m = ModelPreset(name);
    ASSERT_TRUE(m.ok());
    EXPECT_TRUE(Validate(*m).ok()) << name << ": " << Validate(*m).message();
  }
}

}  // namespace
}  // namespace genie::synth
