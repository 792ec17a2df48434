#include "genie/report/html/html_page.h"

#include <cctype>
#include <cstddef>
#include <filesystem>
#include <string_view>

#include "genie/record/output_guard.h"
#include "genie/report/atomic_file.h"
#include "genie/report/html/chart_js.h"
#include "genie/report/html/page_model.h"

namespace genie::report::html {

// Generated from report_template.html by cmake/EmbedResource.cmake.
extern const char kReportTemplate[];
extern const std::size_t kReportTemplate_size;

namespace {

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A script's text must not contain "</script" (any case): it would end the element.
std::string ScriptSafeJs(std::string js) {
  for (size_t i = 0; (i = js.find("</", i)) != std::string::npos; i += 3) {
    std::string_view rest(js.data() + i + 2, std::min<size_t>(6, js.size() - i - 2));
    std::string lower(rest);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "script") js.replace(i, 2, "<\\/");
  }
  return js;
}

}  // namespace

std::string ScriptSafeJson(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderPage(const nlohmann::json& model, const std::string& chart_js) {
  const std::string_view tmpl(kReportTemplate, kReportTemplate_size);
  const std::pair<std::string_view, std::string> fills[] = {
      {"@GENIE_TITLE@", HtmlEscape(model.value("title", std::string("genie report")))},
      {"@GENIE_DATA@", ScriptSafeJson(model)},
      {"@GENIE_CHARTJS@", ScriptSafeJs(chart_js)},
  };
  // Placeholders are looked for in the template only, never in what was filled in.
  std::string out;
  out.reserve(tmpl.size() + chart_js.size() + 4096);
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t next = std::string_view::npos;
    const std::pair<std::string_view, std::string>* which = nullptr;
    for (const auto& f : fills) {
      const size_t at = tmpl.find(f.first, pos);
      if (at < next) {
        next = at;
        which = &f;
      }
    }
    if (which == nullptr) {
      out.append(tmpl.substr(pos));
      break;
    }
    out.append(tmpl.substr(pos, next - pos));
    out.append(which->second);
    pos = next + which->first.size();
  }
  return out;
}

namespace {

std::string TraceHref(const std::string& trace, const std::filesystem::path& page_dir) {
  std::error_code ec;
  const std::string rel = std::filesystem::absolute(trace, ec)
                              .lexically_proximate(page_dir)
                              .generic_string();
  // Every byte but [A-Za-z0-9-._~/] percent-encoded: a ':' can no longer make a scheme
  // (javascript:, data:), nor '?' / '#' end the path.
  std::string href;
  for (unsigned char c : rel) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      href.push_back(static_cast<char>(c));
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";
      href += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return href;
}

}  // namespace

Status WriteReportFromPanels(std::vector<nlohmann::json> panels, const std::string& out,
                             const std::string& title) {
  // The page never replaces what it shows (record/output_guard.h): each panel's file and trace.
  record::OutputPlan plan;
  plan.outputs = {out};
  for (const auto& p : panels) {
    for (const char* key : {"name", "trace"}) {
      if (p.contains(key) && p[key].is_string()) plan.inputs.push_back(p[key].get<std::string>());
    }
  }
  GENIE_RETURN_IF_ERROR(record::CheckOutputs(plan));
  GENIE_ASSIGN_OR_RETURN(std::string chart_js, ChartJs());
  // A trace link works from where the page is: relative to the page's folder, and only ever a
  // relative path (TraceHref), whatever the trace or the results folder is called.
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path page_dir = fs::absolute(fs::path(out), ec).parent_path();
  for (auto& p : panels) {
    if (!p.contains("trace") || !p["trace"].is_string()) continue;
    const std::string trace = p["trace"].get<std::string>();
    p["trace_href"] = TraceHref(trace, page_dir);
    p["trace"] = fs::absolute(trace, ec).lexically_proximate(page_dir).generic_string();
  }
  const std::string page = RenderPage(PageModel(std::move(panels), title), chart_js);
  return WriteFileAtomically(out, page);
}

Status WriteReport(const std::vector<std::string>& paths, const std::string& out,
                   const std::string& trace, const std::string& title) {
  std::vector<nlohmann::json> panels;
  for (const auto& path : paths) {
    GENIE_ASSIGN_OR_RETURN(nlohmann::json panel,
                           LoadPanel(path, paths.size() == 1 ? trace : std::string()));
    panels.push_back(std::move(panel));
  }
  return WriteReportFromPanels(std::move(panels), out, title);
}

}  // namespace genie::report::html
