; Rust imports for rag_lsp.
;
; Shape of a `use` declaration (@import.name is always a name the declaration
; brings into scope, as written before any `as` alias):
;
;   use crate::config::Settings;         module "crate::config::Settings", names [Settings]
;   use std::fmt::Display as Show;       module "std::fmt::Display",       names [Display]
;   use serde;                           module "serde",                   names [serde]
;   use std::collections::{HashMap, HashSet};
;                                        module "std::collections",        names [HashMap, HashSet]
;   use std::io::{self, Write};          module "std::io",                 names [io, Write]
;   use super::*;                        module "super",                   names []
;
; Nested lists are flattened into the outermost path prefix, because the
; module must be text that exists in the source and `std::io` in
; `use std::{fs, io::{self, Write}};` does not: that is module "std" with names
; [fs, io, Write]. Names are collected two list levels deep; a glob inside a
; list (`use a::{b::*}`) adds no name. A bare top-level list (`use {a, b};`)
; has no prefix and is not reported.
;
; `extern crate serde;` is module "serde" and `mod util;` (a module declared in
; another file) is module "util", both without names.

; ---------------------------------------------------------------- single paths

(use_declaration
  argument: (scoped_identifier
    name: (_) @import.name) @import.module) @import

(use_declaration
  argument: (identifier) @import.module @import.name) @import

(use_declaration
  argument: (use_as_clause
    path: (scoped_identifier
      name: (_) @import.name) @import.module)) @import

(use_declaration
  argument: (use_as_clause
    path: (identifier) @import.module @import.name)) @import

; ---------------------------------------------------------------- globs

(use_declaration
  argument: (use_wildcard
    . (_) @import.module)) @import

; ---------------------------------------------------------------- lists

; The prefix alone, so a list whose items are all globs is still reported.
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module)) @import

; Items of the top-level list.
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      [
        (identifier) @import.name
        (scoped_identifier name: (_) @import.name)
        (use_as_clause path: [
          (identifier) @import.name
          (scoped_identifier name: (_) @import.name)
        ])
      ]))) @import

; `self` in the top-level list binds the prefix's last segment.
(use_declaration
  argument: (scoped_use_list
    path: [
      (identifier) @import.name
      (scoped_identifier name: (_) @import.name)
    ] @import.module
    list: (use_list (self)))) @import

; Items of a list nested one level down: std::{io::{Read, Write}}.
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      (scoped_use_list
        list: (use_list
          [
            (identifier) @import.name
            (scoped_identifier name: (_) @import.name)
            (use_as_clause path: [
              (identifier) @import.name
              (scoped_identifier name: (_) @import.name)
            ])
          ]))))) @import

; `self` in a nested list binds that list's path: std::{io::{self}} -> io.
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      (scoped_use_list
        path: [
          (identifier) @import.name
          (scoped_identifier name: (_) @import.name)
        ]
        list: (use_list (self)))))) @import

; ---------------------------------------------------------------- crates and out-of-line modules

(extern_crate_declaration
  name: (identifier) @import.module) @import

(mod_item
  name: (identifier) @import.module
  !body) @import
