; C definitions and references for rag_lsp.
;
; Conventions (see rag_lsp/index/parse.py): @definition.<kind> on the
; definition, @name on its name; a comment right above it is attached by the
; engine.
;
; Decisions:
; - Functions are indexed where they have a body. Prototypes (`int add(int,
;   int);`) are not definitions: a query cannot tell a header's declaration
;   from a forward declaration in a .c file, and "go to definition" should land
;   on the body.
; - A typedef is kind type, named by its typedef name(s). When it defines a
;   tagged struct/union/enum, the tag is defined on the same node:
;   `typedef struct node {...} node_t;` defines struct `node` and type
;   `node_t`, both starting at the typedef (one chunk, labelled by the
;   typedef name).
;   `typedef struct x X, *PX;` defines X and PX.
; - `#define` is kind macro (object- and function-like); a value-less define
;   named like an include guard (FOO_H, FOO_H_, FOO_INCLUDED) is skipped.
; - Constants: enumerators and file-scope `const` variables.

; ---------------------------------------------------------------- functions

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

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

; static const int LIMIT = 5;  static const char NAME[] = "x";  (file scope)
((translation_unit
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator
      declarator: [
        (identifier) @name
        (array_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (identifier) @name)
      ])) @definition.constant)
  (#eq? @_const "const"))

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
