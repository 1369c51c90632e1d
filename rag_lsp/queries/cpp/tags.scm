; inherits: _c_family
; C++ definitions and references for rag_lsp.
;
; Conventions (see rag_lsp/index/parsing/parse.py): @definition.<kind> on the
; definition, @name on its name, @container on the scope of an out-of-line
; member (`void Server::start() {}` -> Server.start; the engine reduces
; `Box<T>` to `Box`). A `template <...>` line belongs to the definition's chunk
; (template_declaration is a wrapper in languages.toml), and a comment above
; the template attaches to it.
;
; The patterns shared with C are inherited above (queries/_c_family: tagged
; types, typedefs, macros, enumerators, calls, type references); like C, bodies
; only, no prototypes, and `typedef struct node {...} node_t;` defines both
; `node` and `node_t` on the typedef. This file adds:
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
; body a plain identifier names a constructor, see below.) "Not in a class" is
; said by the parent: the file, a namespace or `extern "C"` body, a
; preprocessor conditional, a friend declaration; function templates in the
; file or a namespace.

((function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (reference_declarator (function_declarator declarator: (identifier) @name))
  ]) @definition.function
  (#has-parent? @definition.function
    "translation_unit" "declaration_list" "preproc_if" "preproc_ifdef" "preproc_else" "preproc_elif"
    "friend_declaration"))

((template_declaration
  (function_definition
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function) @_template
  (#has-parent? @_template "translation_unit" "declaration_list"))

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

; ---------------------------------------------------------------- classes
; `class Foo {...};` is followed by its `;` (in a file, namespace or template);
; `class Foo {...} foo;` is the type of a declaration; a nested class is the
; type of a field declaration (structs, unions and enums: see _c_family).

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

; typedef Foo &FooRef; (the other typedef forms are shared with C)
(type_definition
  declarator: (reference_declarator (type_identifier) @name)) @definition.type

; ---------------------------------------------------------------- constants

; const / constexpr variables at file or namespace scope.
((declaration
  (type_qualifier) @_const
  declarator: (init_declarator
    declarator: [
      (identifier) @name
      (array_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (identifier) @name)
    ])) @definition.constant
  (#has-parent? @definition.constant "translation_unit" "declaration_list")
  (#any-of? @_const "const" "constexpr"))

; ---------------------------------------------------------------- references

; obj.get<T>() (foo() and obj.method() are shared with C)
(call_expression
  function: (field_expression
    field: (template_method name: (field_identifier) @name))) @reference.call

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

; class Foo; (uses and forward declarations without a body; struct, union and
; enum as in C)
(class_specifier
  name: (type_identifier) @name
  !body) @reference.type

; Template and qualified types of variables, parameters, fields, returns and
; casts (plain typedef names as in C).
(declaration
  type: [
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(parameter_declaration
  type: [
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(field_declaration
  type: [
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(function_definition
  type: [
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type

(type_descriptor
  type: [
    (template_type name: (type_identifier) @name)
    (qualified_identifier name: (type_identifier) @name)
  ]) @reference.type
