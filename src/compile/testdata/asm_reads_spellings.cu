// Probes (issue 32): file-reading assembler directives in C++ spellings the source rule's text search
// does not see. Each names its own file, so each violation proves its own spelling; none of the files
// exists, and the verdict must be a rejection naming every statement, not a compile error.
#define PROBE_DOT "."

asm("\x2eincbin \"/cutegen-probe/hex-escape\"");       // '.' as a hexadecimal escape
asm("\056incbin \"/cutegen-probe/octal-escape\"");     // '.' as an octal escape
asm(".inc" "bin \"/cutegen-probe/joined-literals\"");  // two literals joined by the compiler
asm(PROBE_DOT "incbin \"/cutegen-probe/macro-dot\"");  // the dot from a macro
asm(".INCBIN \"/cutegen-probe/upper-case\"");          // the assembler ignores letter case
asm("\x2einclude \"/cutegen-probe/include\"");         // .include: the file's lines become assembly
// The assembler's own macros put `.incbin` together out of pieces.
asm(".macro cutegen_probe_m a,b\n.\\a\\()\\b \"/cutegen-probe/gas-macro\"\n.endm\ncutegen_probe_m inc,bin");

__global__ void nothing() {}
