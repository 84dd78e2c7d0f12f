#include "report/html.h"

#include <cctype>

#include <fmt/format.h>

namespace cutegen::html {
namespace {

// One stylesheet for every page: readable on screen, and on paper without backgrounds, with charts
// and table rows kept whole across page breaks.
constexpr const char* kStyle = R"css(
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee8; --bg:#f6f7fa; --card:#fff;
        --ok:#1a7f37; --bad:#c62828; --warn:#b26a00; --accent:#1f5fbf; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
       font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width:1180px; margin:0 auto; padding:20px 24px 40px; }
h1 { font-size:22px; margin:4px 0 2px; } h2 { font-size:17px; margin:28px 0 8px; }
.sub { color:var(--muted); margin:0 0 14px; }
section.card, .cards > div { background:var(--card); border:1px solid var(--line); border-radius:8px; }
section.card { padding:12px 16px; margin:12px 0; }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(128px, 1fr)); gap:10px; margin:12px 0; }
.cards > div { padding:8px 12px; }
.cards .k { color:var(--muted); font-size:12px; } .cards .v { font-size:17px; font-weight:600; }
.cards .n { color:var(--muted); font-size:12px; }
table { border-collapse:collapse; width:100%; background:var(--card); }
th, td { border-bottom:1px solid var(--line); padding:5px 8px; text-align:left; vertical-align:top; }
th { background:#eef1f6; font-weight:600; white-space:nowrap; }
table.sortable th { cursor:pointer; } table.sortable th:after { content:" \2195"; color:var(--muted); }
table.compact th, table.compact td { padding:4px 6px; }
.scroll { overflow-x:auto; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
tr.detail td { border-bottom:1px solid var(--line); padding:0 8px 6px; }
.accepted { color:var(--ok); } .failed, .incorrect, .undone, .unusable { color:var(--bad); }
.slower, .rolled-back, .declined { color:var(--warn); }
pre { background:#f3f5f9; border:1px solid var(--line); border-radius:6px; padding:8px 10px; overflow-x:auto;
      font:12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space:pre; margin:6px 0; }
pre.wrap { white-space:pre-wrap; word-break:break-word; }
pre.diff .add { color:#116329; background:#e6ffec; } pre.diff .del { color:#82071e; background:#ffebe9; }
pre.diff .hunk { color:#6639ba; } pre.diff .meta { color:var(--muted); }
pre.diff span { display:block; }
details > summary { cursor:pointer; color:var(--accent); }
svg.chart { width:100%; height:auto; background:var(--card); border:1px solid var(--line); border-radius:8px; }
svg.chart text { font:12px system-ui, sans-serif; fill:var(--fg); }
svg.chart .axis line, svg.chart .axis path { stroke:#8a93a5; } svg.chart .grid line { stroke:#eceff4; }
svg.chart .tick text, svg.chart .ref text { fill:var(--muted); font-size:11px; }
svg.chart .ref text, svg.chart .series + text, svg.chart g.series text { paint-order:stroke; stroke:#fff; stroke-width:3px; }
svg.chart .title { font-weight:600; font-size:13px; }
.charts { display:grid; grid-template-columns:repeat(auto-fit, minmax(440px, 1fr)); gap:14px; }
.note { color:var(--muted); font-size:12px; }
.warn { color:var(--warn); }
@media print {
  body { background:#fff; font-size:11px; } main { max-width:none; padding:0; }
  section.card, .cards > div, svg.chart { border-color:#bbb; }
  .charts { display:block; } svg.chart { break-inside:avoid; margin-bottom:8px; max-width:560px; }
  tr, pre, .cards, figure { break-inside:avoid; } h2 { break-after:avoid; }
  pre { white-space:pre-wrap; word-break:break-word; background:#fff; }
  details > summary { color:var(--fg); }
  table.sortable th:after { content:""; }
  .scroll { overflow:visible; }
}
)css";

// Every <details> opens before printing: a closed one would print as its summary alone.
constexpr const char* kPrintScript =
    "window.addEventListener('beforeprint',function(){document.querySelectorAll('details')"
    ".forEach(function(d){d.open=true;});});";

// Sorts a table's row groups (<tbody>, so a row stays with its detail row) by the clicked column:
// numerically when both keys are numbers, else as text, a number before a non-number (a missing value,
// "—") either way, so the order is total and missing values stay at the bottom; a second click reverses.
constexpr const char* kSortScript = R"js(
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,col){
    th.addEventListener('click',function(){
      var dir=th.dataset.dir==='asc'?-1:1; th.dataset.dir=dir>0?'asc':'desc';
      var groups=Array.prototype.slice.call(t.tBodies);
      var key=function(g){var c=g.rows[0].cells[col];return c?(c.dataset.sort!==undefined?c.dataset.sort:c.textContent):'';};
      groups.sort(function(a,b){var x=key(a),y=key(b),nx=parseFloat(x),ny=parseFloat(y);
        if(!isNaN(nx)&&!isNaN(ny))return (nx-ny)*dir; if(!isNaN(nx))return -1; if(!isNaN(ny))return 1;
        return x.localeCompare(y)*dir;});
      groups.forEach(function(g){t.appendChild(g);});
    });
  });
});
)js";

std::string attr(std::string_view name, std::string_view value) {
  return value.empty() ? "" : fmt::format(" {}=\"{}\"", name, escape(value));
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string url_path(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string pre(std::string_view text, std::string_view css_class) {
  return fmt::format("<pre{}>{}</pre>", attr("class", css_class), escape(text));
}

std::string diff_block(std::string_view diff) {
  std::string out = "<pre class=\"diff\">";
  for (std::size_t pos = 0; pos < diff.size();) {
    std::size_t nl = diff.find('\n', pos);
    std::string_view line = diff.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? diff.size() : nl + 1;
    const char* cls = "";
    if (line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0 || line.rfind("\\", 0) == 0) cls = "meta";
    else if (line.rfind("@@", 0) == 0) cls = "hunk";
    else if (line.rfind("+", 0) == 0) cls = "add";
    else if (line.rfind("-", 0) == 0) cls = "del";
    out += fmt::format("<span{}>{}</span>", attr("class", cls), line.empty() ? " " : escape(line));
  }
  return out + "</pre>";
}

std::string details(std::string_view summary_html, std::string_view body_html, bool open, std::string_view css_class) {
  return fmt::format("<details{}{}><summary>{}</summary>{}</details>", attr("class", css_class), open ? " open" : "",
                     summary_html, body_html);
}

Cell text_cell(std::string_view text, std::string_view css_class) {
  return Cell{escape(text), "", std::string(css_class)};
}

Cell number_cell(std::string_view shown, double value) {
  return Cell{escape(shown), fmt::format("{}", value), "num"};
}

std::string Table::render() const {
  std::string cls = css_class;
  if (sortable) cls += cls.empty() ? "sortable" : " sortable";
  std::string out = fmt::format("<table{}{}><thead><tr>", attr("id", id), attr("class", cls));
  for (const auto& h : headers) out += "<th>" + escape(h) + "</th>";
  out += "</tr></thead>";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += "<tbody><tr>";
    for (const auto& c : rows[r])
      out += fmt::format("<td{}{}>{}</td>", attr("class", c.css_class), attr("data-sort", c.sort_key), c.html);
    out += "</tr>";
    if (r < detail_rows.size() && !detail_rows[r].empty())
      out += fmt::format("<tr class=\"detail\"><td colspan=\"{}\">{}</td></tr>", headers.size(), detail_rows[r]);
    out += "</tbody>";
  }
  return out + "</table>";
}

std::string render_page(const Page& page) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + escape(page.title) + "</title><style>" + kStyle + "</style></head>\n<body><main>\n";
  out += page.body_html;
  out += "\n</main><script>";
  out += kPrintScript;
  if (page.sortable_tables) out += kSortScript;
  return out + "</script></body></html>\n";
}

}  // namespace cutegen::html
