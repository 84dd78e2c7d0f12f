#pragma once
// nvcc runs its phases one after another, but two chains of them need not wait for each other: the
// host front end (preprocessing, then cudafe++, which splits host from device code) and the device
// compile (preprocessing, cicc, ptxas, fatbinary). Only the module id ties them: cudafe++ writes it,
// cicc reads it, and both put it into the names of internal-linkage entities, which the host stub then
// registers by name. Given the id up front, both chains read it and run side by side: on a CuTe
// candidate that is cudafe++ (~2.4 s) beside cicc (~2.3 s), a third of nvcc's wall time.
//
// The plan comes from `nvcc --dryrun` (the documented way to see and rerun nvcc's steps): its
// `#$ NAME=VALUE` lines are the environment nvcc gives its children, every other `#$` line a command it
// runs through `sh -c`. With nvcc 13.0 the overlapped build writes a library byte for byte identical
// to nvcc's own given the same id (nvcc_plan_test.cpp holds this on the installed toolkit).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct NvccPlan {
  std::vector<std::pair<std::string, std::string>> env;  // in nvcc's order
  std::vector<std::string> commands;                     // shell command lines, in nvcc's order
};

// The `#$` lines of `nvcc --dryrun`'s output (other lines are ignored). Error: no command at all.
Result<NvccPlan> parse_nvcc_dryrun(std::string_view output);

struct OverlappedBuild {
  std::string chains;          // POSIX sh: the steps up to both chains' ends, run in nvcc's working directory
  std::string rest;            // POSIX sh: the steps after them (the host compile, the link), in order
  std::string module_id_file;  // where the caller writes the id before running `chains` (relative path)
  std::string device_image;    // the cubin ptxas writes (relative path), complete once `chains` succeeded
  // The host compile through a precompiled header (host_pch.h), where its step has the shape that needs:
  // empty, with `no_host_pch` saying why, otherwise.
  std::string host_source;  // the C++ cudafe++ writes and the host compile reads (relative path)
  std::string rest_with_pch;  // `rest` with the host compile reading kHostPrefixHeader beside host_source
                              // through its .gch (an unusable .gch is an error), as `-S` then the assembler
  std::string pch_script;   // sh, run where kHostPrefixHeader is: writes its .gch with the host compile's flags
  std::string no_host_pch;  // why rest_with_pch and pch_script are empty
  // The host compile started at the end of cicc's front end (stub_ahead.h), beside the rest of the device
  // compile: empty scripts with `why_not` saying why where the plan does not allow it.
  struct StubAhead {
    std::string front;        // sh: the steps before the chains, then the front end (output to front-end.log, which
                              // it prints) beside the early stub in kStubAheadDir (output to its own log)
    std::string device;       // sh: the device chain alone (preprocessing, cicc, ptxas, fatbinary)
    std::string host;         // sh, run in kStubAheadDir: the host compile to assembly through the precompiled header
    std::string after;        // sh: the assembler on `assembly`, then the steps after the host compile
    std::string source;       // the source the early chain preprocesses (relative: a copy goes in kStubAheadDir)
    std::string stub;         // the stub cicc writes (relative path), in both directories
    std::string fatbin_include;  // the file the stub #includes for the embedded fatbinary, beside it
    std::string embedded_fatbin;  // fatbinary's C form of it (relative path)
    std::string assembly;     // the host compile's assembly (relative path)
    std::string why_not;
  } ahead;
};

// Where the early stub's chain and the host compile started from it run, inside the build's directory.
inline constexpr const char* kStubAheadDir = "stub-ahead";
// The option that ends the early cicc after its front end (libnvvm refuses it: stub_ahead.h).
inline constexpr const char* kStopAfterFrontEnd = "-cutegen-stop-after-front-end";

// The plan as two scripts: `chains` runs the host front end beside the device compile, `rest` the steps
// after them in order. Between the two the device code is built, so a check of it can run beside `rest`.
// Each chain's output is held back and printed in nvcc's order (the front end's first), and a chain that
// fails ends the script with its status after its output, so a compile error reads as nvcc's does (once,
// not once per chain). Error, saying what differs: a plan not of the shape this relies on (one cudafe++
// generating the module id that one cicc reads, each chain reading nothing the other writes).
Result<OverlappedBuild> overlapped_build(const NvccPlan& plan, std::string_view log_dir);

// The header a build's host source includes in place of its prefix (host_pch.h), beside that source.
inline constexpr const char* kHostPrefixHeader = "cutegen-host-prefix.h";

// An id of the shape nvcc gives (`_<8 hex>_<length>_<name with . as _>_<8 hex>`), from a hex digest.
std::string module_id_for(std::string_view source_name, std::string_view hex_digest);

// The module ids named in a build's text (the host stub, the PTX) that are not `module_id`: empty when
// both chains used the id they were given.
std::vector<std::string> foreign_module_ids(std::string_view text, std::string_view source_name,
                                            std::string_view module_id);

}  // namespace cutegen
