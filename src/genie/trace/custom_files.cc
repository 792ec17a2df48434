#include "genie/trace/custom_files.h"

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "genie/trace/chakra_custom.h"
#include "genie/trace/msccl_xml.h"

namespace genie::trace {
namespace fs = std::filesystem;

Result<std::shared_ptr<const spec::CustomAlgorithm>> LoadCustomAlgorithm(const std::string& path) {
  const bool xml = path.size() > 4 && path.compare(path.size() - 4, 4, ".xml") == 0;
  GENIE_ASSIGN_OR_RETURN(spec::CustomAlgorithm a, xml ? ReadMscclXml(path) : ReadChakraCustom(path));
  return std::shared_ptr<const spec::CustomAlgorithm>(std::make_shared<spec::CustomAlgorithm>(std::move(a)));
}

Result<std::string> ResolveCustomPath(const std::string& written, const std::string& config_path) {
  std::vector<fs::path> tried;
  const fs::path p(written);
  if (p.is_absolute()) {
    tried.push_back(p);
  } else {
    if (!config_path.empty()) tried.push_back(fs::path(config_path).parent_path() / p);
    tried.push_back(fs::current_path() / p);
  }
  for (const fs::path& candidate : tried) {
    std::error_code ec;
    const std::string c = candidate.string();
    if (fs::exists(candidate, ec) || fs::exists(c + ".0.et", ec) || fs::exists(c + ".0.et.gz", ec)) {
      return c;
    }
  }
  std::string where;
  for (const fs::path& t : tried) where += "\n  " + t.string() + " (or " + t.string() + ".0.et)";
  return Status::NotFound("custom collective '" + written + "'" +
                          (config_path.empty() ? "" : " named in " + config_path) +
                          " was not found; looked in:" + where +
                          "\nwrite a path relative to the config's folder, or an absolute one");
}

}  // namespace genie::trace
