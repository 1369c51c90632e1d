; C imports for rag_lsp: `#include "ledger.h"` and `#include <stdio.h>`, the
; module being the path without quotes or angle brackets (the engine strips
; them). An include has no names. `#include MACRO` is not reported.

(preproc_include
  path: [(string_literal) (system_lib_string)] @import.module) @import
