// Writes the synthetic suite (synthetic_suite.h) for report/suite_page_test.sh.
// Usage: make-suite-fixture DIR N [baselines]
#include <cstdio>
#include <string>

#include "synthetic_suite.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: make-suite-fixture DIR N [baselines]\n");
    return 2;
  }
  bool baselines = argc > 3 && std::string(argv[3]) == "baselines";
  auto s = cutegen::fixtures::write_synthetic_suite(argv[1], std::stoi(argv[2]), baselines);
  if (!s) {
    std::fprintf(stderr, "make-suite-fixture: %s\n", s.error().message.c_str());
    return 1;
  }
  return 0;
}
