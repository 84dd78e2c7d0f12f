#include "compile/built_cute.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "compile/sass_lines.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

// nvdisasm --print-line-info-inline output, trimmed (src/compile/testdata/sass_line_info.txt): two
// kernels and a device function one of them calls.
std::map<std::string, SassFunction> fixture() {
  auto text = read_file(fs::path(CUTEGEN_TESTDATA) / "sass_line_info.txt");
  EXPECT_TRUE(text.ok());
  return parse_sass_line_info(text.ok() ? *text : "");
}

const std::string kCandidate = "/run/candidate.cu";
const fs::path kCute = "/opt/cutlass/include/cute";

}  // namespace

TEST(SassLines, FunctionsKernelsAndCallsAreRead) {
  auto sass = fixture();
  ASSERT_EQ(sass.size(), 3u);
  EXPECT_TRUE(sass.at("_Z5tilesPKfPf").kernel);
  EXPECT_TRUE(sass.at("_Z4rawsPKfPf").kernel);
  EXPECT_FALSE(sass.at("_Z6helperPf").kernel);
  EXPECT_EQ(sass.at("_Z4rawsPKfPf").callees, std::set<std::string>{"_Z6helperPf"});
  EXPECT_TRUE(sass.at("_Z5tilesPKfPf").callees.empty());  // a branch to a label is not a call
  ASSERT_EQ(sass.at("_Z5tilesPKfPf").instructions.size(), 6u);
  ASSERT_EQ(sass.at("_Z4rawsPKfPf").instructions.size(), 8u);
}

TEST(SassLines, EachInstructionCarriesItsInlineChainInnermostFirst) {
  const auto sass = fixture();
  const auto& tiles = sass.at("_Z5tilesPKfPf").instructions;
  EXPECT_EQ(tiles[0].opcode, "LDC");
  EXPECT_EQ(tiles[0].chain, (std::vector<SourcePosition>{{kCandidate, 30}}));
  EXPECT_EQ(tiles[1].chain, (std::vector<SourcePosition>{{"/opt/cutlass/include/cute/tensor_impl.hpp", 266},
                                                         {kCandidate, 34}}));
  EXPECT_EQ(tiles[2].opcode, "STG.E.128");
  ASSERT_EQ(tiles[2].chain.size(), 3u);
  EXPECT_EQ(tiles[2].chain[0], (SourcePosition{"/opt/cutlass/include/cute/algorithm/copy.hpp", 59}));
  EXPECT_EQ(tiles[2].chain[2], (SourcePosition{kCandidate, 39}));
  // A label between instructions does not end the chain; the predicate is not the opcode.
  EXPECT_EQ(tiles[3].opcode, "STG.E.128");
  EXPECT_EQ(tiles[3].chain, tiles[2].chain);
  EXPECT_EQ(tiles[4].chain, (std::vector<SourcePosition>{{kCandidate, 41}}));
}

TEST(SassLines, GlobalStoresAreToldFromOtherMemoryWrites) {
  for (const char* op : {"STG.E", "STG.E.128", "ST.E.64", "RED.E.ADD.F32.FTZ.RN.STRONG.GPU", "ATOMG.E.EXCH.STRONG.GPU",
                         "ATOM.E.ADD", "UTMASTG.2D", "UBLKCP.G.S"})
    EXPECT_TRUE(is_global_store(op)) << op;
  for (const char* op : {"STS", "STS.128", "STL.64", "ATOMS.ADD", "LDG.E", "STAS", "STSM.16.M88.4", "S2R", ""})
    EXPECT_FALSE(is_global_store(op)) << op;
}

TEST(SassLines, TextThatIsNotNvdisasmsYieldsNoFunctions) {
  EXPECT_TRUE(parse_sass_line_info("nvdisasm fatal : not a cubin\n").empty());
}

TEST(BuiltCute, AKernelWhoseStoresComeFromCuteLinesPasses) {
  // raws's line 51 is a gY(i) = v the analysis saw evaluating a layout.
  auto v = built_cute_violations(fixture(), {"_Z4rawsPKfPf"}, {{kCandidate, 51}}, kCute);
  EXPECT_TRUE(v.empty()) << v.front().message;
}

TEST(BuiltCute, AStoreInsideACuteCopyCountsWhateverLineTheCallIsOn) {
  // tiles stores inside cute/algorithm/copy.hpp, called from line 39, which is no site here.
  auto v = built_cute_violations(fixture(), {"_Z5tilesPKfPf"}, {}, kCute);
  EXPECT_TRUE(v.empty()) << v.front().message;
}

TEST(BuiltCute, CuteOnlyInReadsIsRawStores) {
  // Only the load at line 50 is CuTe's; the stores (lines 51 and 53, and 12 in the called helper) are
  // not — line 53's goes through cute/arch/copy.hpp (UniversalCopy on a plain reference), no tensor.
  auto v = built_cute_violations(fixture(), {"_Z4rawsPKfPf"}, {{kCandidate, 50}}, kCute);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].code, "raw-stores");
  EXPECT_NE(v[0].message.find("kernel raws("), std::string::npos) << v[0].message;
  EXPECT_NE(v[0].message.find("none of its 4 stores"), std::string::npos) << v[0].message;  // 2 STG, RED, ATOMG
  EXPECT_NE(v[0].message.find("line 12, 51, 53"), std::string::npos) << v[0].message;
}

TEST(BuiltCute, CuteTheBuildDroppedIsCuteNotBuilt) {
  // The analysis saw CuTe at line 70, which the build's code never mentions; CuTe's arch/ header in
  // a chain (line 53) is no evidence either.
  auto v = built_cute_violations(fixture(), {"_Z4rawsPKfPf"}, {{kCandidate, 70}}, kCute);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].code, "cute-not-built");
  EXPECT_NE(v[0].message.find("kernel raws("), std::string::npos) << v[0].message;
}

TEST(BuiltCute, ACalledDeviceFunctionCountsForTheKernel) {
  // raws's own stores are raw; the function it calls stores from line 12, a CuTe line.
  EXPECT_TRUE(built_cute_violations(fixture(), {"_Z4rawsPKfPf"}, {{kCandidate, 12}}, kCute).empty());
  EXPECT_EQ(built_cute_violations(fixture(), {"_Z4rawsPKfPf"}, {{kCandidate, 52}}, kCute).at(0).code, "raw-stores");
}

TEST(BuiltCute, AKernelNvdisasmDidNotPrintIsUnverifiable) {
  auto v = built_cute_violations(fixture(), {"_Z7missingv"}, {{kCandidate, 34}}, kCute);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].code, "cute-unverifiable");
}

TEST(BuiltCute, PathsAreComparedNormalised) {
  // The sites come normalised from the analysis; the line table's spelling is normalised here.
  auto sass = fixture();
  for (auto& ins : sass.at("_Z4rawsPKfPf").instructions)
    for (auto& p : ins.chain) p.file = "/run/x/../candidate.cu";
  EXPECT_TRUE(built_cute_violations(sass, {"_Z4rawsPKfPf"}, {{kCandidate, 51}}, kCute).empty());
  EXPECT_FALSE(built_cute_violations(sass, {"_Z4rawsPKfPf"}, {{"/run/x/candidate.cu", 51}}, kCute).empty());
}
