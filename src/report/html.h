#pragma once
// The pieces every cutegen HTML page is made of: escaping, a self-contained page shell (inline CSS
// with a print stylesheet, no network at view time), tables, collapsible sections and unified diffs.
// Kernel sources, LLM answers and judge evidence are untrusted text: every string that is not markup
// built here goes through escape_html, and the helpers take text (escaped here) unless the parameter
// says `html`.
#include <string>
#include <string_view>
#include <vector>

namespace cutegen::html {

// Text for element content and quoted attribute values: & < > " ' become entities.
std::string escape(std::string_view text);

// A relative path as a URL path: every byte but unreserved characters and '/' percent-encoded (a task
// named "a#b" or "50% off" must still link to its own directory). Escape it again for an attribute.
std::string url_path(std::string_view path);

// A <pre> block of untrusted text.
std::string pre(std::string_view text, std::string_view css_class = "");

// A unified diff as a <pre class="diff">, one span per line classed add/del/hunk/meta.
std::string diff_block(std::string_view diff);

// <details> with a summary (html) and a body (html); `open` shows it expanded (print expands all).
std::string details(std::string_view summary_html, std::string_view body_html, bool open = false,
                    std::string_view css_class = "");

struct Cell {
  std::string html;       // the cell's markup (escape text before putting it here)
  std::string sort_key;   // data-sort value for sortable tables ("" uses the text); numbers sort numerically
  std::string css_class;
};

struct Table {
  std::string id;                       // element id ("" for none)
  std::string css_class;
  std::vector<std::string> headers;     // text
  std::vector<std::vector<Cell>> rows;
  // A row's optional second line spanning every column (a collapsible diff, say): rows[i] pairs with
  // detail_rows[i] when detail_rows is non-empty; the pair stays together when sorting.
  std::vector<std::string> detail_rows;
  bool sortable = false;                // click a header to sort (a few lines of inline script)

  std::string render() const;
};

// A cell of text, escaped.
Cell text_cell(std::string_view text, std::string_view css_class = "");
// A number cell: right-aligned, sorting by `value`.
Cell number_cell(std::string_view shown, double value);

struct Page {
  std::string title;        // text
  std::string body_html;
  bool sortable_tables = false;  // include the sorting script
};

// A complete HTML document: doctype, charset, viewport, the stylesheet (screen and print), the body,
// and the few lines of script a page needs (open every <details> before printing; sorting).
std::string render_page(const Page& page);

}  // namespace cutegen::html
