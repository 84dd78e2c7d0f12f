#pragma once
// Turns nvcc's log (hundreds of lines of template back-traces for one CuTe mistake) into the short
// evidence the LLM's diagnose step needs: each distinct error once, located on the candidate's own
// line with that source line shown, the first few only.
#include <filesystem>
#include <string>
#include <vector>

namespace cutegen {

struct DiagnosticError {
  std::string message;        // first line of the compiler's message, without [with ...] noise
  std::vector<std::string> details;  // e.g. "argument types are: (...)", shortened
  std::string origin;         // "cute/layout.hpp:1572" when the error was raised inside a header
  int candidate_line = 0;     // innermost line of the candidate involved; 0 when none (ptxas, link)
  std::vector<std::string> via;  // template chain from the candidate's line inward (function names only)
  int follow_on = 0;          // further errors reported at the same candidate line
};

struct CondensedDiagnostic {
  std::vector<DiagnosticError> errors;  // at most the requested number, in log order
  int total_errors = 0;                 // every error line in the log, before de-duplication
  int distinct_errors = 0;              // after grouping by candidate line and message
  std::string text;                     // ready for a prompt or a terminal
};

// `log` is nvcc's combined output; `candidate_name` is how the candidate file appears in it (nvcc runs
// in the candidate's directory, so a bare file name); `source` is the candidate's text, for quoting lines.
CondensedDiagnostic condense_nvcc_log(const std::string& log, const std::string& candidate_name,
                                      const std::string& source, int max_errors = 5);

// ptxas's "Potential Performance Loss" notes (printed as `ptxas info`) in a log that built: each once, the kernel's mangled name
// cut to its first 60 characters. C7510 ("wgmma.mma_async instructions are serialized ... crossing function
// boundary") is the costly one: every wgmma then waits for the one before, typically because an assert or a
// call sits in the mainloop -- the library convolution ran that way until NDEBUG came before its headers.
std::vector<std::string> performance_warnings(const std::string& log);

// What nvcc's log may quote: the candidate (by the name nvcc was given) and headers under `roots`.
struct QuotableFiles {
  std::string candidate;
  std::vector<std::filesystem::path> roots;
};

// nvcc quotes the source lines of the files it reports on. Defence in depth behind the include rules:
// every report located in a file outside `quotable` keeps its location but loses its text (message,
// quoted source, caret), which becomes "(text from <path> not shown)". Applied to the log before it is
// stored, condensed or shown, so no file outside the candidate and the allowed headers can be quoted
// back to the LLM provider or the cache.
std::string redact_nvcc_log(const std::string& log, const QuotableFiles& quotable);

}  // namespace cutegen
