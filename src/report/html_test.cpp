#include "report/html.h"

#include <gtest/gtest.h>

using namespace cutegen;

TEST(Html, EscapesEveryCharacterThatCouldOpenMarkup) {
  EXPECT_EQ(html::escape("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
  EXPECT_EQ(html::escape("plain text, 1.5x"), "plain text, 1.5x");
}

TEST(Html, PreAndDetailsEscapeTheirText) {
  EXPECT_EQ(html::pre("a<b>", "wrap"), "<pre class=\"wrap\">a&lt;b&gt;</pre>");
  EXPECT_EQ(html::details("sum", "<p>body</p>", true), "<details open><summary>sum</summary><p>body</p></details>");
}

TEST(Html, DiffLinesAreClassedByTheirRole) {
  std::string d = html::diff_block("--- a/kernel.cu\n+++ b/kernel.cu\n@@ -1,2 +1,2 @@\n keep\n-old<T>\n+new<T>\n");
  EXPECT_NE(d.find("<span class=\"meta\">--- a/kernel.cu</span>"), std::string::npos) << d;
  EXPECT_NE(d.find("<span class=\"hunk\">@@ -1,2 +1,2 @@</span>"), std::string::npos) << d;
  EXPECT_NE(d.find("<span class=\"del\">-old&lt;T&gt;</span>"), std::string::npos) << d;
  EXPECT_NE(d.find("<span class=\"add\">+new&lt;T&gt;</span>"), std::string::npos) << d;
  EXPECT_NE(d.find("<span> keep</span>"), std::string::npos) << d;
}

TEST(Html, TableRowsKeepTheirDetailRowInOneGroup) {
  html::Table t{.id = "t", .headers = {"name", "time"}, .sortable = true};
  t.rows = {{html::text_cell("a<b"), html::number_cell("2.00 ms", 2)}, {html::text_cell("c"), html::number_cell("1 ms", 1)}};
  t.detail_rows = {"<i>diff</i>", ""};
  std::string h = t.render();
  EXPECT_NE(h.find("<table id=\"t\" class=\"sortable\">"), std::string::npos) << h;
  EXPECT_NE(h.find("<tbody><tr><td>a&lt;b</td><td class=\"num\" data-sort=\"2\">2.00 ms</td></tr>"
                   "<tr class=\"detail\"><td colspan=\"2\"><i>diff</i></td></tr></tbody>"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("<tbody><tr><td>c</td><td class=\"num\" data-sort=\"1\">1 ms</td></tr></tbody>"), std::string::npos)
      << h;
}

TEST(Html, APageIsSelfContained) {
  std::string page = html::render_page({.title = "run <x>", .body_html = "<p>hi</p>", .sortable_tables = true});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>run &lt;x&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("@media print"), std::string::npos) << "a print stylesheet";
  EXPECT_NE(page.find("beforeprint"), std::string::npos) << "details open for printing";
  EXPECT_NE(page.find("table.sortable"), std::string::npos);
  for (const char* fetch : {" src=", "<link", "@import", "url(http", "fetch("})
    EXPECT_EQ(page.find(fetch), std::string::npos) << fetch;
}
