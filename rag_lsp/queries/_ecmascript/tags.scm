; Tags shared by JavaScript, TypeScript and TSX: the patterns whose node types
; and fields are the same in the three grammars, so each captures the same
; thing in each of them. javascript/tags.scm and typescript/tags.scm inherit
; this file (`; inherits: _ecmascript`) and add only what differs: class
; names (`identifier` in JavaScript, `type_identifier` in TypeScript), class
; fields (`field_definition` vs `public_field_definition`), heritage clauses,
; and everything TypeScript adds (signatures, interfaces, types, enums,
; namespaces, type references).
; Definitions: @definition.<kind> on the node whose chunk it is, @name on its name.
; Declarations are captured at the statement (lexical_declaration,
; expression_statement) so that `export` wrappers and leading comments attach.

; --- Functions -------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

; const foo = () => {} / var foo = function () {} with a single declarator:
; the statement is the definition, so `export` and comments above it attach.
[
  (lexical_declaration
    .
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)])
    .)
  (variable_declaration
    .
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)])
    .)
] @definition.function

; const a = () => 1, b = () => 2: with several declarators each declarator is
; the definition (on the shared statement they would nest in one another).
(_
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
  .
  (variable_declarator))

(_
  (variable_declarator)
  .
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)

; --- Classes and their methods -----------------------------------------------

; const Foo = class { ... } (one declarator, then several, as for functions)
(lexical_declaration
  .
  (variable_declarator
    name: (identifier) @name
    value: (class))
  .) @definition.class

(_
  (variable_declarator
    name: (identifier) @name
    value: (class)) @definition.class
  .
  (variable_declarator))

(_
  (variable_declarator)
  .
  (variable_declarator
    name: (identifier) @name
    value: (class)) @definition.class)

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier)] @name) @definition.method
  (#not-eq? @name "constructor"))

(class_body
  (method_definition
    name: (property_identifier) @name) @definition.constructor
  (#eq? @name "constructor"))

; --- CommonJS and prototype definitions --------------------------------------

; module.exports = { foo() {}, bar: () => {} }
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_module
      property: (property_identifier) @_exports)
    right: (object
      [
        (method_definition
          name: (property_identifier) @name)
        (pair
          key: (property_identifier) @name
          value: [(arrow_function) (function_expression) (generator_function)])
      ] @definition.function))
  (#eq? @_module "module")
  (#eq? @_exports "exports"))

; exports.foo = function () {} / module.exports.foo = function () {}
; (in the first form @_module is absent, and a predicate on an absent capture holds)
(expression_statement
  (assignment_expression
    left: (member_expression
      object: [
        (identifier) @_exports
        (member_expression
          object: (identifier) @_module
          property: (property_identifier) @_exports)
      ]
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_exports "exports")
  (#eq? @_module "module")) @definition.function

; Foo.prototype.bar = function () {}  ->  method Foo.bar
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression
        object: (identifier) @container
        property: (property_identifier) @_prototype)
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_prototype "prototype")) @definition.method

; --- Module-level constants --------------------------------------------------
; Every `const` binding at the top level (or exported) that is not a function or
; class (those are captured above) and not a require()/import() (an import).
; One declarator: the statement is the definition; several: each declarator.
; The value types include TypeScript's `x as T`, `x satisfies T` and `x!`
; (a #kind-eq? list may name types a grammar lacks; see languages.py).

([
  (lexical_declaration
    kind: "const"
    .
    (variable_declarator
      name: (identifier) @name
      value: (_) @_value)
    .) @definition.constant
  (lexical_declaration
    kind: "const"
    (variable_declarator
      name: (identifier) @name
      value: (_) @_value) @definition.constant
    .
    (variable_declarator))
  (lexical_declaration
    kind: "const"
    (variable_declarator)
    .
    (variable_declarator
      name: (identifier) @name
      value: (_) @_value) @definition.constant)
] @_statement
  (#has-parent? @_statement "program" "export_statement")
  (#kind-eq? @_value
    "array" "object" "string" "template_string" "number" "regex"
    "true" "false" "null" "undefined" "identifier"
    "call_expression" "new_expression" "member_expression" "subscript_expression"
    "binary_expression" "unary_expression" "ternary_expression"
    "parenthesized_expression" "await_expression"
    "as_expression" "satisfies_expression" "non_null_expression")
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

; --- References: calls -------------------------------------------------------

; foo()
(call_expression
  function: (identifier) @name) @reference.call

; obj.foo() / this.#foo()
(call_expression
  function: (member_expression
    property: [(property_identifier) (private_property_identifier)] @name)) @reference.call

; new Foo() / new ns.Foo()
(new_expression
  constructor: (identifier) @name) @reference.call

(new_expression
  constructor: (member_expression
    property: (property_identifier) @name)) @reference.call

; @decorator / @decorator(...) (the call form is a call_expression above)
(decorator
  (identifier) @name) @reference.call

(decorator
  (member_expression
    property: (property_identifier) @name)) @reference.call
