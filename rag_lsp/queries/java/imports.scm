; Java imports for rag_lsp. The module is the dotted name as written, without
; `static` and without a trailing `.*`; the name is what the import brings into
; scope, and an on-demand (`.*`) import has no name:
;
;   import java.util.List;                        module "java.util.List",                   names [List]
;   import static java.util.Objects.requireNonNull;
;                                                 module "java.util.Objects.requireNonNull", names [requireNonNull]
;   import java.io.*;                             module "java.io",                          names []
;   import static org.junit.Assert.*;             module "org.junit.Assert",                 names []
;
; The `package` declaration is not an import (the symbol index reads it
; separately).

; Single-type and single-static imports: the name is the last named child.
(import_declaration
  (scoped_identifier
    name: (identifier) @import.name) @import.module
  .) @import

; On-demand imports.
(import_declaration
  [(scoped_identifier) (identifier)] @import.module
  .
  (asterisk)) @import
