; TypeScript imports: ES modules, re-exports, `import x = require()`, dynamic import() and CommonJS require().
; @import on the statement (or call), @import.module on the module string
; (quotes are stripped by the engine), @import.name on each imported name, and
; @import.alias on the local (or re-exported) name when it differs: paired with the
; @import.name of the same match, or naming the module itself (`* as ns`), or `*`
; for `export * from`.
; Matches on the same statement are merged, so the plain pattern records the
; module and the others add names.

; import "mod" / import x, {a, b as c} from "mod" / import * as ns from "mod"
(import_statement
  source: (string) @import.module) @import

; import x from "mod"  (the default import, by its local name)
(import_statement
  (import_clause
    (identifier) @import.name)
  source: (string) @import.module) @import

; import {a, b as c} from "mod"  (by the exported name)
(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (identifier) @import.name)))
  source: (string) @import.module) @import

; import {a as b} from "mod"  (the local name b for a)
(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (identifier) @import.name
        alias: (identifier) @import.alias)))
  source: (string) @import.module) @import

; import * as ns from "mod"
(import_statement
  (import_clause
    (namespace_import
      (identifier) @import.alias))
  source: (string) @import.module) @import

; export * from "mod" / export {a, b as c} from "mod"
(export_statement
  source: (string) @import.module) @import

(export_statement
  "*" @import.alias
  .
  "from"
  source: (string) @import.module) @import

(export_statement
  (namespace_export
    (identifier) @import.alias)
  source: (string) @import.module) @import

(export_statement
  (export_clause
    (export_specifier
      name: (identifier) @import.name
      alias: (identifier) @import.alias))
  source: (string) @import.module) @import

(export_statement
  (export_clause
    (export_specifier
      name: (identifier) @import.name))
  source: (string) @import.module) @import

; import("mod")
(call_expression
  function: (import)
  arguments: (arguments
    .
    (string) @import.module)) @import

; require("mod") anywhere
(call_expression
  function: (identifier) @_require
  arguments: (arguments
    .
    (string) @import.module)
  (#eq? @_require "require")) @import

; const x = require("mod")
(variable_declarator
  name: (identifier) @import.name
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments
      .
      (string) @import.module)) @import
  (#eq? @_require "require"))

; const {a, b: c} = require("mod")
(variable_declarator
  name: (object_pattern
    [
      (shorthand_property_identifier_pattern) @import.name
      (pair_pattern
        key: (property_identifier) @import.name)
    ])
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments
      .
      (string) @import.module)) @import
  (#eq? @_require "require"))

; import fs = require("fs")
(import_statement
  (import_require_clause
    (identifier) @import.name
    source: (string) @import.module)) @import
