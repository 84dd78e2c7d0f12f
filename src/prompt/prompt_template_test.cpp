#include "prompt/prompt_template.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {
using cutegen::testing::contains;


const char* kTemplate =
    "<!--\n"
    "Asks for a greeting.\n"
    "{{name}}   who to greet\n"
    "{{kernel}} the current kernel source,\n"
    "           verbatim\n"
    "-->\n"
    "Hello {{name}}!\n"
    "```cuda\n"
    "{{kernel}}\n"
    "```\n"
    "Bye {{name}}.\n";

}  // namespace

TEST(PromptTemplate, ParsesHeaderAndPlaceholders) {
  auto t = PromptTemplate::parse(kTemplate, "greet.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->placeholders(), (std::vector<std::string>{"name", "kernel"}));
  EXPECT_EQ(t->purpose(), "Asks for a greeting.");
  EXPECT_EQ(t->documentation().at("kernel"), "the current kernel source, verbatim");
}

TEST(PromptTemplate, RendersValuesVerbatimWithoutRescanning) {
  auto t = PromptTemplate::parse(kTemplate, "greet.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto r = t->render({{"name", "GPU"}, {"kernel", "int a[2][2] = {{1, 2}, {3, 4}}; // {{name}}"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "Hello GPU!\n```cuda\nint a[2][2] = {{1, 2}, {3, 4}}; // {{name}}\n```\nBye GPU.\n");
}

TEST(PromptTemplate, MissingAndUnknownValuesAreErrors) {
  auto t = PromptTemplate::parse(kTemplate, "greet.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto r = t->render({{"name", "x"}, {"kernal", "typo"}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "no value for {{kernel}}")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "{{kernal}} given but the template has no such placeholder"))
      << r.error().message;
  EXPECT_TRUE(t->render({{"name", ""}, {"kernel", ""}}).ok()) << "empty values are allowed";
}

TEST(PromptTemplate, UndocumentedPlaceholderIsAnError) {
  auto t = PromptTemplate::parse("<!--\nx\n{{a}} documented\n-->\n{{a}} and\n{{b}}\n", "t.md");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(contains(t.error().message, "t.md: line 6: {{b}} is used but not documented")) << t.error().message;
}

TEST(PromptTemplate, DocumentedButUnusedIsAnError) {
  auto t = PromptTemplate::parse("<!--\n{{a}} one\n{{b}} two\n-->\n{{a}}\n", "t.md");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(contains(t.error().message, "documents {{b}} but the body never uses it")) << t.error().message;
}

TEST(PromptTemplate, MalformedPlaceholders) {
  for (const char* body : {"{{ a }}", "{{A}}", "{{a", "{{a\n}}", "{{}}"}) {
    auto t = PromptTemplate::parse(std::string("<!--\n{{a}} one\n-->\n{{a}}") + body, "t.md");
    EXPECT_FALSE(t.ok()) << body;
  }
}

TEST(PromptTemplate, HeaderIsRequired) {
  auto t = PromptTemplate::parse("Hello {{name}}\n", "t.md");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(contains(t.error().message, "must start with a <!-- ... --> header")) << t.error().message;
  EXPECT_FALSE(PromptTemplate::parse("<!--\n{{a}} x\n{{a}}\n", "t.md").ok()) << "unclosed header";
  EXPECT_FALSE(PromptTemplate::parse("<!--\n{{a}}\n-->\n{{a}}\n", "t.md").ok()) << "undescribed placeholder";
}

TEST(PromptTemplate, LoadsFromDiskAndNamesTheFileInErrors) {
  auto dir = std::filesystem::temp_directory_path() / "cutegen_prompt_template_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "greet.md") << kTemplate;
  std::ofstream(dir / "broken.md") << "<!--\n{{a}} one\n-->\n{{b}}\n";
  auto t = PromptTemplate::load(dir / "greet.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->placeholders().size(), 2u);
  EXPECT_EQ(t->origin(), (dir / "greet.md").string());
  auto broken = PromptTemplate::load(dir / "broken.md");
  ASSERT_FALSE(broken.ok());
  EXPECT_TRUE(contains(broken.error().message, "broken.md: line 4: {{b}} is used but not documented"))
      << broken.error().message;
  EXPECT_FALSE(PromptTemplate::load(dir / "nope.md").ok());
  std::filesystem::remove_all(dir);
}

TEST(PromptTemplate, CrlfTemplateRendersItsBody) {
  auto t = PromptTemplate::parse("<!--\r\nx\r\n{{a}} one\r\n-->\r\nA={{a}}\r\n", "t.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto r = t->render({{"a", "1"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "A=1\r\n");
}
