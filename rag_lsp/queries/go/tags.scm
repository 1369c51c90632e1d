; Go definitions and references for rag_lsp.
;
; Conventions (see rag_lsp/index/parsing/parse.py): @definition.<kind> on the node whose
; span is the definition, @name on its name, @container on a method receiver's
; type (the engine reduces `*Server` / `Stack[T]` to `Server` / `Stack`).
;
; Type, const and var declarations: a lone `type X ...` puts the definition on
; the whole `type_declaration` (so a `//` comment above it attaches); in a
; grouped `type ( ... )` each `type_spec` is its own definition (comments inside
; the group attach to the spec below them).

; ---------------------------------------------------------------- functions

(function_declaration
  name: (identifier) @name) @definition.function

; `func (s *Server) Start()` -> Server.Start (method, via @container).
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: (_) @container))
  name: (field_identifier) @name) @definition.function

; Method specs of an interface; the enclosing interface makes them methods.
(method_elem
  name: (field_identifier) @name) @definition.method

; ---------------------------------------------------------------- types, lone

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type))) @definition.struct
  (#not-match? @definition.struct "^type\\s*\\("))

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type))) @definition.interface
  (#not-match? @definition.interface "^type\\s*\\("))

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [
      (type_identifier) (qualified_type) (generic_type) (pointer_type)
      (array_type) (slice_type) (map_type) (channel_type) (function_type)
      (negated_type) (parenthesized_type)
    ])) @definition.type
  (#not-match? @definition.type "^type\\s*\\("))

; `type Alias = Other`
((type_declaration
  (type_alias
    name: (type_identifier) @name)) @definition.type
  (#not-match? @definition.type "^type\\s*\\("))

; ---------------------------------------------------------------- types, grouped

(type_declaration
  "("
  (type_spec
    name: (type_identifier) @name
    type: (struct_type)) @definition.struct)

(type_declaration
  "("
  (type_spec
    name: (type_identifier) @name
    type: (interface_type)) @definition.interface)

(type_declaration
  "("
  (type_spec
    name: (type_identifier) @name
    type: [
      (type_identifier) (qualified_type) (generic_type) (pointer_type)
      (array_type) (slice_type) (map_type) (channel_type) (function_type)
      (negated_type) (parenthesized_type)
    ]) @definition.type)

(type_declaration
  "("
  (type_alias
    name: (type_identifier) @name) @definition.type)

; ---------------------------------------------------------------- package-level const and var
; Like types: a lone `const X = 1` is defined by the whole declaration, a
; grouped one by its spec. `const A, B = 1, 2` defines both names on the same
; node. Names are matched without the `name:` field on purpose: with the
; field, tree-sitter yields only the first name of a const_spec. Values sit in
; an expression_list and types are type nodes, so a bare (identifier) child of
; a spec is always a declared name.

((source_file
  (const_declaration
    (const_spec
      (identifier) @name)) @definition.constant)
  (#not-match? @definition.constant "^const\\s*\\("))

(source_file
  (const_declaration
    "("
    (const_spec
      (identifier) @name) @definition.constant))

; A lone `var x = ...` holds its var_spec directly; a grouped one holds a var_spec_list.
(source_file
  (var_declaration
    (var_spec
      (identifier) @name)) @definition.constant)

(source_file
  (var_declaration
    (var_spec_list
      (var_spec
        (identifier) @name) @definition.constant)))

; ---------------------------------------------------------------- references

; foo()
(call_expression
  function: (identifier) @name) @reference.call

; pkg.Foo(), s.Start()
(call_expression
  function: (selector_expression
    field: (field_identifier) @name)) @reference.call

; Generic instantiation: Map[int](xs), pkg.Map[int](xs)
(call_expression
  function: (index_expression
    operand: [
      (identifier) @name
      (selector_expression field: (field_identifier) @name)
    ])) @reference.call

; Composite literals: Server{}, &Server{}, pkg.Server{}, Stack[int]{}
(composite_literal
  type: [
    (type_identifier) @name
    (qualified_type name: (type_identifier) @name)
    (generic_type type: [
      (type_identifier) @name
      (qualified_type name: (type_identifier) @name)
    ])
  ]) @reference.type

; Embedded interfaces and struct fields: interface { io.Reader }, struct { Base }
(interface_type
  (type_elem
    [
      (type_identifier) @name
      (qualified_type name: (type_identifier) @name)
    ]) @reference.type)

(field_declaration
  !name
  type: [
    (type_identifier) @name
    (qualified_type name: (type_identifier) @name)
    (pointer_type [
      (type_identifier) @name
      (qualified_type name: (type_identifier) @name)
    ])
  ]) @reference.type
