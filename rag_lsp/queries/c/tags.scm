; inherits: _c_family
; C definitions and references for rag_lsp: the patterns shared with C++ are
; inherited above (tagged types, typedefs, macros, enumerators, references).
;
; Conventions (see rag_lsp/index/parsing/parse.py): @definition.<kind> on the
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

; ---------------------------------------------------------------- constants

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
