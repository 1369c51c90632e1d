; C++ imports for rag_lsp: `#include "server.hpp"` and `#include <vector>`, the
; module being the path without quotes or angle brackets (the engine strips
; them). An include has no names. `using namespace std;` and `using
; std::string;` name symbols, not files, and are not imports.

(preproc_include
  path: [(string_literal) (system_lib_string)] @import.module) @import
