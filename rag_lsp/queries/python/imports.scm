; @import on the statement, @import.module on the module text, @import.name on each imported name,
; @import.alias on the local name an import binds when it differs (paired with the @import.name of the
; same match; without one it names the module itself, and `*` stands for a wildcard import).
(import_statement
  name: (dotted_name) @import.module) @import

(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.module
  name: (dotted_name) @import.name) @import

(import_from_statement
  module_name: (_) @import.module
  name: (aliased_import
    name: (dotted_name) @import.name
    alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.alias) @import
