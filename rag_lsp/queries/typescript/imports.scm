; inherits: javascript
; TypeScript imports: every JavaScript pattern (inherited above) plus `import x = require()`.

; import fs = require("fs")
(import_statement
  (import_require_clause
    (identifier) @import.name
    source: (string) @import.module)) @import
