#include "genie/common/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace genie {
namespace {

// Splits "1.5MiB" into 1.5 and "MiB".
bool SplitNumber(std::string_view text, double* number, std::string* suffix) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return false;
  std::string num(text.substr(0, i));
  char* end = nullptr;
  *number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  std::string_view rest = text.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  *suffix = std::string(rest);
  return true;
}

}  // namespace

Result<Bytes> ParseBytes(std::string_view text) {
  double n = 0;
  std::string suffix;
  if (!SplitNumber(text, &n, &suffix)) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a byte count (examples: 1048576, 1MiB, 64K, 1MB)");
  }
  double mult = 0;
  std::string s;
  for (char c : suffix) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.empty() || s == "b") mult = 1;
  else if (s == "k" || s == "kib") mult = 1024.0;
  else if (s == "m" || s == "mib") mult = 1024.0 * 1024;
  else if (s == "g" || s == "gib") mult = 1024.0 * 1024 * 1024;
  else if (s == "t" || s == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (s == "kb") mult = 1e3;
  else if (s == "mb") mult = 1e6;
  else if (s == "gb") mult = 1e9;
  else if (s == "tb") mult = 1e12;
  else {
    return Status::InvalidArgument("unknown byte unit '" + suffix + "' in '" + std::string(text) +
                                   "' (use B, K/KiB, M/MiB, G/GiB, or KB/MB/GB for powers of 10)");
  }
  double v = n * mult;
  if (v != std::floor(v) || v < 0 || v > 1.8e19) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a whole number of bytes");
  }
  return static_cast<Bytes>(v);
}

Result<double> ParseFraction(std::string_view text) {
  std::string_view t = text;
  bool percent = false;
  while (!t.empty() && (t.back() == ' ' || t.back() == '%')) {
    percent = percent || t.back() == '%';
    t.remove_suffix(1);
  }
  const std::string num(t);
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (num.empty() || end != num.c_str() + num.size()) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a fraction (examples: 10%, 0.5%, 0.1)");
  }
  return percent ? v / 100 : v;
}

Result<uint64_t> ParseBitRate(std::string_view text) {
  double n = 0;
  std::string suffix;
  if (!SplitNumber(text, &n, &suffix)) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a link rate (examples: 1gbit, 400mbit, 100Mbit/s)");
  }
  std::string s;
  for (char c : suffix) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.size() > 2 && s.substr(s.size() - 2) == "/s") s.resize(s.size() - 2);
  if (s.size() > 3 && s.substr(s.size() - 3) == "bps") s = s.substr(0, s.size() - 3) + "bit";
  double mult = 0;
  if (s.empty() || s == "bit") mult = 1;
  else if (s == "kbit") mult = 1e3;
  else if (s == "mbit") mult = 1e6;
  else if (s == "gbit") mult = 1e9;
  else if (s == "tbit") mult = 1e12;
  else {
    return Status::InvalidArgument("unknown rate unit '" + suffix + "' in '" + std::string(text) +
                                   "' (use bit, kbit, mbit, gbit, tbit — bits per second)");
  }
  double v = n * mult;
  if (v < 1 || v > 1.8e19) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a usable link rate");
  }
  return static_cast<uint64_t>(std::llround(v));
}

std::string FormatBitRate(uint64_t bps) {
  const char* units[] = {"bit", "kbit", "mbit", "gbit", "tbit"};
  int u = 0;
  uint64_t v = bps;
  while (u < 4 && v >= 1000 && v % 1000 == 0) {
    v /= 1000;
    ++u;
  }
  return std::to_string(v) + units[u];
}

Result<TimeNs> ParseDuration(std::string_view text) {
  double n = 0;
  std::string suffix;
  if (!SplitNumber(text, &n, &suffix)) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a duration (examples: 30s, 500ms, 100us, 250ns)");
  }
  double mult = 0;
  if (suffix.empty() || suffix == "s") mult = 1e9;
  else if (suffix == "ms") mult = 1e6;
  else if (suffix == "us") mult = 1e3;
  else if (suffix == "ns") mult = 1;
  else if (suffix == "m" || suffix == "min") mult = 60e9;
  else {
    return Status::InvalidArgument("unknown time unit '" + suffix + "' in '" + std::string(text) +
                                   "' (use ns, us, ms, s or min)");
  }
  return static_cast<TimeNs>(std::llround(n * mult));
}

std::string FormatBytes(Bytes bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0 || v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[u]);
  else std::snprintf(buf, sizeof buf, "%.3g %s", v, kUnits[u]);
  return buf;
}

std::string FormatDuration(TimeNs ns) {
  char buf[32];
  double v = static_cast<double>(ns);
  if (ns < 0) return "-" + FormatDuration(-ns);
  if (ns < kNsPerUs) std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  else if (ns < kNsPerMs) std::snprintf(buf, sizeof buf, "%.3f us", v / 1e3);
  else if (ns < kNsPerSec) std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", v / 1e9);
  return buf;
}

}  // namespace genie
