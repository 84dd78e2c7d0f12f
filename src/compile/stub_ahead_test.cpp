#include "compile/stub_ahead.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace cutegen;

namespace {

// fatbinary 13.0's --embedded-fatbin output, its data cut to three lines.
std::string nvcc_fatbin_c(const std::string& size = "3") {
  return "#ifndef __SKIP_INTERNAL_FATBINARY_HEADERS\n"
         "#include \"fatbinary_section.h\"\n"
         "#endif\n"
         "#define __CUDAFATBINSECTION  \".nvFatBinSegment\"\n"
         "#define __CUDAFATBINDATASECTION  \".nv_fatbin\"\n"
         "asm(\n"
         "\".section .nv_fatbin, \\\"a\\\"\\n\"\n"
         "\".align 8\\n\"\n"
         "\"fatbinData:\\n\"\n"
         "\".quad 0x00100001ba55ed50,0x0000000000000e30,0x0000004001010002,0x0000000000000df0\\n\"\n"
         "\".quad 0x0000000000000000,0x0000005a00010008,0x0000000000000000,0x0000000000100011\\n\"\n"
         "\".quad 0x0000000000000008,0x0000000400000001\\n\"\n"
         "\".text\\n\");\n"
         "#ifdef __cplusplus\n"
         "extern \"C\" {\n"
         "#endif\n"
         "extern const unsigned long long fatbinData[" + size + "];\n"
         "#ifdef __cplusplus\n"
         "}\n"
         "#endif\n"
         "#ifdef __cplusplus\n"
         "extern \"C\" {\n"
         "#endif\n"
         "static const __fatBinC_Wrapper_t __fatDeviceText __attribute__ ((aligned (8))) __attribute__ ((section "
         "(__CUDAFATBINSECTION)))= \n"
         "\t{ 0x466243b1, 1, fatbinData, 0 };\n"
         "#ifdef __cplusplus\n"
         "}\n"
         "#endif\n";
}

const std::string kAssembly = "\t.text\n#APP\n\t.section .nv_fatbin, \"a\"\n.align 8\nfatbinData:\n" +
                              std::string(kFatbinDataMarker) + "\n.text\n#NO_APP\n\t.ident\t\"GCC\"\n";

}  // namespace

TEST(StubAhead, NvccsFatbinaryCFormIsThePlaceholderButForItsData) {
  auto placeholder = placeholder_of(nvcc_fatbin_c());
  ASSERT_TRUE(placeholder.ok()) << placeholder.error().message;
  EXPECT_EQ(*placeholder, fatbin_placeholder());
  EXPECT_EQ(*placeholder_of(nvcc_fatbin_c("456")), fatbin_placeholder()) << "the array's size is the data's";
  // Another format (a second section, a renamed symbol) is not the placeholder's: the host compile runs again.
  std::string other = nvcc_fatbin_c();
  other.replace(other.find("fatbinData, 0"), 13, "fatbinData, 1");
  EXPECT_NE(*placeholder_of(other), fatbin_placeholder());
  std::string split = nvcc_fatbin_c();
  split.insert(split.find("\".quad 0x0000000000000008"), "\".align 8\\n\"\n");
  EXPECT_FALSE(placeholder_of(split).ok()) << "two runs of data";
  EXPECT_FALSE(placeholder_of("#include \"fatbinary_section.h\"\n").ok()) << "no data";
}

TEST(StubAhead, TheDataTakesTheMarkersPlaceAsTheAssemblerReadsIt) {
  auto spliced = splice_fatbin(kAssembly, nvcc_fatbin_c());
  ASSERT_TRUE(spliced.ok()) << spliced.error().message;
  EXPECT_EQ(*spliced, "\t.text\n#APP\n\t.section .nv_fatbin, \"a\"\n.align 8\nfatbinData:\n"
                      ".quad 0x00100001ba55ed50,0x0000000000000e30,0x0000004001010002,0x0000000000000df0\n"
                      ".quad 0x0000000000000000,0x0000005a00010008,0x0000000000000000,0x0000000000100011\n"
                      ".quad 0x0000000000000008,0x0000000400000001\n"
                      ".text\n#NO_APP\n\t.ident\t\"GCC\"\n");
}

// A candidate's own asm may print the marker too: the data goes nowhere but where the placeholder put it,
// and nothing is spliced where the marker is not there at all.
TEST(StubAhead, AMarkerThatIsNotThereExactlyOnceIsAnError) {
  const std::string twice = kAssembly + std::string(kFatbinDataMarker) + "\n";
  auto r = splice_fatbin(twice, nvcc_fatbin_c());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("2 lines"), std::string::npos) << r.error().message;
  EXPECT_FALSE(splice_fatbin("\t.text\n", nvcc_fatbin_c()).ok());
  EXPECT_FALSE(splice_fatbin(kAssembly, "no data\n").ok());
  // Only a line that is the marker alone counts.
  EXPECT_FALSE(splice_fatbin("\t.ascii \"" + std::string(kFatbinDataMarker) + "\"\n", nvcc_fatbin_c()).ok());
}
