; Go imports for rag_lsp: one import per spec, lone or grouped.
; @import is the spec (so a grouped import reports the line of its own path),
; @import.module is the import path (quotes stripped by the engine). Go imports
; whole packages, so there are no @import.name captures; an alias (`srv
; "net/http"`, `_ "embed"`, `. "fmt"`) does not change the module.

(import_spec
  path: (_) @import.module) @import
