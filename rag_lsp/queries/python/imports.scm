; @import on the statement, @import.module on the module text, @import.name on each imported name.
(import_statement
  name: (dotted_name) @import.module) @import

(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module)) @import

(import_from_statement
  module_name: (_) @import.module
  name: (dotted_name) @import.name) @import

(import_from_statement
  module_name: (_) @import.module
  name: (aliased_import
    name: (dotted_name) @import.name)) @import

(import_from_statement
  module_name: (_) @import.module
  (wildcard_import)) @import
