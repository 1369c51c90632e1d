; Tags shared by C and C++: the patterns whose node types and fields are the
; same in both grammars, so each captures the same thing in both. c/tags.scm
; and cpp/tags.scm inherit this file (`; inherits: _c_family`) and add their
; own functions (C++ tells free functions from constructors and methods),
; constants (C++ also has `constexpr` and namespaces) and, for C++, classes,
; namespaces, aliases and qualified or template names.
; Conventions (see rag_lsp/index/parsing/parse.py): @definition.<kind> on the
; definition, @name on its name; a comment right above it is attached by the
; engine.

; ---------------------------------------------------------------- tagged types (outside typedefs)
; `struct point {...};` is followed by its `;`, which tells it from the
; `typedef struct point {...} point_t;` form (see typedefs below).
; `struct point {...} origin;` is the type of a declaration.

(_
  (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct
  .
  ";")

(declaration
  type: (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct)

(field_declaration
  type: (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.struct)

(_
  (union_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.union
  .
  ";")

(declaration
  type: (union_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.union)

(field_declaration
  type: (union_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.union)

(_
  (enum_specifier
    name: (type_identifier) @name
    body: (enumerator_list)) @definition.enum
  .
  ";")

(declaration
  type: (enum_specifier
    name: (type_identifier) @name
    body: (enumerator_list)) @definition.enum)

(field_declaration
  type: (enum_specifier
    name: (type_identifier) @name
    body: (enumerator_list)) @definition.enum)

; ---------------------------------------------------------------- typedefs
; The tag of a typedef'd struct/union/enum comes first so that the typedef name
; labels the chunk they share.

(type_definition
  type: (struct_specifier
    name: (type_identifier) @name
    body: (field_declaration_list))) @definition.struct

(type_definition
  type: (union_specifier
    name: (type_identifier) @name
    body: (field_declaration_list))) @definition.union

(type_definition
  type: (enum_specifier
    name: (type_identifier) @name
    body: (enumerator_list))) @definition.enum

(type_definition
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (pointer_declarator declarator: (pointer_declarator declarator: (type_identifier) @name))
    (array_declarator declarator: (type_identifier) @name)
    ; typedef int (*handler_fn)(int);
    (function_declarator declarator: (parenthesized_declarator
      (pointer_declarator declarator: (type_identifier) @name)))
    ; typedef int handler_fn(int);
    (function_declarator declarator: (type_identifier) @name)
  ]) @definition.type

; ---------------------------------------------------------------- macros

(preproc_function_def
  name: (identifier) @name) @definition.macro

(preproc_def
  name: (identifier) @name
  value: (_)) @definition.macro

((preproc_def
  name: (identifier) @name
  !value) @definition.macro
  (#not-match? @name "_(H|HH|HPP|HXX|INCLUDED|INCLUDE|DEFINED)_*$"))

; ---------------------------------------------------------------- constants

(enumerator
  name: (identifier) @name) @definition.constant

; ---------------------------------------------------------------- references

; foo(), MACRO(x)
(call_expression
  function: (identifier) @name) @reference.call

; ops->write(), obj.callback()
(call_expression
  function: (field_expression
    field: (field_identifier) @name)) @reference.call

; struct point p;  union value v;  enum color c;  (uses without a body)
(struct_specifier
  name: (type_identifier) @name
  !body) @reference.type

(union_specifier
  name: (type_identifier) @name
  !body) @reference.type

(enum_specifier
  name: (type_identifier) @name
  !body) @reference.type

; Typedef names used as types of variables, parameters, fields and returns.
(declaration
  type: (type_identifier) @name) @reference.type

(parameter_declaration
  type: (type_identifier) @name) @reference.type

(field_declaration
  type: (type_identifier) @name) @reference.type

(function_definition
  type: (type_identifier) @name) @reference.type

(type_descriptor
  type: (type_identifier) @name) @reference.type
