; C++ definitions and references for rag_lsp.
;
; Conventions (see rag_lsp/index/parse.py): @definition.<kind> on the
; definition, @name on its name, @container on the scope of an out-of-line
; member (`void Server::start() {}` -> Server.start; the engine reduces
; `Box<T>` to `Box`). A `template <...>` line belongs to the definition's chunk
; (template_declaration is a wrapper in languages.toml), and a comment above
; the template attaches to it.
;
; Everything the C query indexes is indexed here the same way (see
; queries/c/tags.scm: bodies only, no prototypes; `typedef struct node {...}
; node_t;` defines both `node` and `node_t` on the typedef), plus:
; - classes, namespaces (`namespace a::b` is `a.b`: named by its last part,
;   owned by the part before it), `using X = ...` aliases (kind type);
; - methods: defined in the class body (kind method through nesting) or out of
;   line (`Foo::bar`, `ns::Foo::bar`: the scope right before the name is the
;   owner); constructors (kind constructor, `Foo.Foo`), in the class body or
;   out of line; destructors and operators as methods named `~Foo` and
;   `operator==`.
; Method declarations without a body (`void stop();`, `virtual void run() = 0;`)
; are not definitions, like C prototypes. Conversion operators (`operator
; bool()`) are not indexed.

; ---------------------------------------------------------------- functions and methods

; Named by a field_identifier (methods defined in a class body), an operator or
; a destructor: never a constructor. Nesting in a class makes them methods.
(function_definition
  declarator: [
    (function_declarator declarator: [(field_identifier) (operator_name) (destructor_name)] @name)
    (pointer_declarator declarator: (function_declarator
      declarator: [(field_identifier) (operator_name) (destructor_name)] @name))
    (reference_declarator (function_declarator
      declarator: [(field_identifier) (operator_name) (destructor_name)] @name))
  ]) @definition.function

; Named by a plain identifier outside a class body: free functions. (In a class
; body a plain identifier names a constructor, see below.) One pattern per
; kind of parent, because a query cannot say "not in a class": the file, a
; namespace or `extern "C"` body, a preprocessor conditional, a friend
; declaration, and function templates in the file or a namespace.

(translation_unit
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(declaration_list
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(preproc_if
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(preproc_ifdef
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(preproc_else
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(preproc_elif
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(friend_declaration
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(translation_unit
  (template_declaration
    (function_definition
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function))

(declaration_list
  (template_declaration
    (function_definition
      declarator: [
        (function_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
        (reference_declarator (function_declarator declarator: (identifier) @name))
      ]) @definition.function))

; Constructors in a class body: Server() : port_(0) {}   Server(const Server&) = default;
(field_declaration_list
  (function_definition
    declarator: (function_declarator
      declarator: (identifier) @name)) @definition.constructor)

; Member templates: a constructor when named after the class, else a method.
((_
  name: (type_identifier) @_class
  body: (field_declaration_list
    (template_declaration
      (function_definition
        declarator: (function_declarator
          declarator: (identifier) @name)) @definition.constructor)))
  (#eq? @_class @name))

((_
  name: (type_identifier) @_class
  body: (field_declaration_list
    (template_declaration
      (function_definition
        declarator: [
          (function_declarator declarator: (identifier) @name)
          (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
          (reference_declarator (function_declarator declarator: (identifier) @name))
        ]) @definition.function)))
  (#not-eq? @_class @name))

; ---------------------------------------------------------------- out-of-line members
; The owner is the scope right before the name: Foo::bar, ns::Foo::bar and
; a::b::Foo::bar all belong to Foo. A name equal to its owner is a constructor.

((function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier
      scope: (_) @container
      name: [(identifier) (operator_name) (destructor_name)] @name))
    (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @container
        name: [(identifier) (operator_name) (destructor_name)] @name)))
    (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        name: (qualified_identifier
          scope: (_) @container
          name: [(identifier) (operator_name) (destructor_name)] @name))))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier
      scope: (_) @container
      name: [(identifier) (operator_name)] @name)))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @container
        name: [(identifier) (operator_name)] @name))))
    (reference_declarator (function_declarator declarator: (qualified_identifier
      scope: (_) @container
      name: [(identifier) (operator_name)] @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @container
        name: [(identifier) (operator_name)] @name))))
  ]) @definition.function
  (#not-eq? @container @name))

((function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier
      scope: (_) @container
      name: (identifier) @name))
    (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @container
        name: (identifier) @name)))
    (function_declarator declarator: (qualified_identifier
      name: (qualified_identifier
        name: (qualified_identifier
          scope: (_) @container
          name: (identifier) @name))))
  ]) @definition.constructor
  (#eq? @container @name))

; ---------------------------------------------------------------- classes, structs, unions, enums
; `class Foo {...};` is followed by its `;` (in a file, namespace or template);
; `struct Foo {...} foo;` is the type of a declaration; a nested type is the
; type of a field declaration. The `typedef struct {...} Foo;` form is with the
; typedefs below.

(_
  (class_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.class
  .
  ";")

(declaration
  type: (class_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.class)

(field_declaration
  type: (class_specifier
    name: (type_identifier) @name
    body: (field_declaration_list)) @definition.class)

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

; ---------------------------------------------------------------- namespaces

(namespace_definition
  name: (namespace_identifier) @name) @definition.namespace

; namespace a::b -> a.b ; namespace a::b::c -> b.c (the owner is the part right before)
(namespace_definition
  name: (nested_namespace_specifier
    (namespace_identifier) @container
    .
    (namespace_identifier) @name .)) @definition.namespace

(namespace_definition
  name: (nested_namespace_specifier
    (nested_namespace_specifier
      (namespace_identifier) @container
      .
      (namespace_identifier) @name .))) @definition.namespace

; ---------------------------------------------------------------- type aliases

(alias_declaration
  name: (type_identifier) @name) @definition.type

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
    (reference_declarator (type_identifier) @name)
    (array_declarator declarator: (type_identifier) @name)
    (function_declarator declarator: (parenthesized_declarator
      (pointer_declarator declarator: (type_identifier) @name)))
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

; const / constexpr variables at file or namespace scope.
((translation_unit
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator
      declarator: [
        (identifier) @name
        (array_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (identifier) @name)
      ])) @definition.constant)
  (#any-of? @_const "const" "constexpr"))

((declaration_list
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator
      declarator: [
        (identifier) @name
        (array_declarator declarator: (identifier) @name)
        (pointer_declarator declarator: (identifier) @name)
      ])) @definition.constant)
  (#any-of? @_const "const" "constexpr"))

; ---------------------------------------------------------------- references

; foo(), obj.method(), ptr->method(), obj.get<T>()
(call_expression
  function: [
    (identifier) @name
    (field_expression field: (field_identifier) @name)
    (field_expression field: (template_method name: (field_identifier) @name))
  ]) @reference.call

; ns::func(), Foo::create(), a::b::c()
(call_expression
  function: (qualified_identifier
    name: [
      (identifier) @name
      (template_function name: (identifier) @name)
      (qualified_identifier name: [
        (identifier) @name
        (template_function name: (identifier) @name)
        (qualified_identifier name: (identifier) @name)
      ])
    ])) @reference.call

; make<T>()
(call_expression
  function: (template_function
    name: (identifier) @name)) @reference.call

; new Foo(...), new ns::Foo(...), new Box<int>(...)
(new_expression
  type: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: [
      (type_identifier) @name
      (template_type name: (type_identifier) @name)
    ])
  ]) @reference.call

; Base classes: class Server : public Base, private util::Mixin<int>
(base_class_clause
  [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: [
      (type_identifier) @name
      (template_type name: (type_identifier) @name)
    ])
  ] @reference.type)

; struct point p; class Foo; (uses and forward declarations without a body)
(struct_specifier
  name: (type_identifier) @name
  !body) @reference.type

(class_specifier
  name: (type_identifier) @name
  !body) @reference.type

(union_specifier
  name: (type_identifier) @name
  !body) @reference.type

(enum_specifier
  name: (type_identifier) @name
  !body) @reference.type

; Named types of variables, parameters, fields, returns and casts.
(declaration
  type: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(parameter_declaration
  type: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(field_declaration
  type: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(function_definition
  type: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(type_descriptor
  type: [
    (type_identifier) @name
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type
