; TypeScript tags (tsx/tags.scm inherits them and adds JSX).
; Definitions: @definition.<kind> on the node whose chunk it is, @name on its name.
; Declarations are captured at the statement (lexical_declaration,
; expression_statement) so that `export` wrappers and leading comments attach.

; --- Functions -------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

; Overload signatures, at the top level, exported or in a namespace body.
(program
  (function_signature
    name: (identifier) @name) @definition.function)

(export_statement
  declaration: (function_signature
    name: (identifier) @name) @definition.function)

(statement_block
  (function_signature
    name: (identifier) @name) @definition.function)

; declare function foo(): void;  (the statement, so comments above attach)
(ambient_declaration
  (function_signature
    name: (identifier) @name)) @definition.function

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

; --- Classes, interfaces, types, enums, namespaces ----------------------------

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

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

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum

; Enum members: Color.Red
(enum_body
  name: (property_identifier) @name @definition.constant)

(enum_body
  (enum_assignment
    name: (property_identifier) @name) @definition.constant)

; namespace Foo {} is an expression statement in this grammar: capture the
; statement so that comments above it attach.
(expression_statement
  (internal_module
    name: [(identifier) (nested_identifier)] @name)) @definition.namespace

(export_statement
  declaration: (internal_module
    name: [(identifier) (nested_identifier)] @name) @definition.namespace)

(ambient_declaration
  (internal_module
    name: [(identifier) (nested_identifier)] @name)) @definition.namespace

; module Foo {} (not `declare module "foo"`, whose name is a string)
(module
  name: [(identifier) (nested_identifier)] @name) @definition.module

; --- Members -------------------------------------------------------------------

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier)] @name) @definition.method
  (#not-eq? @name "constructor"))

(class_body
  (method_definition
    name: (property_identifier) @name) @definition.constructor
  (#eq? @name "constructor"))

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; Overloads of a method inside a class body.
(class_body
  (method_signature
    name: [(property_identifier) (private_property_identifier)] @name) @definition.method)

; Methods declared by interfaces and object types: m(x: number): string;
(interface_body
  (method_signature
    name: (property_identifier) @name) @definition.method)

(object_type
  (method_signature
    name: (property_identifier) @name) @definition.method)

; handleClick = () => {} as a class field
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.method

; --- CommonJS and prototype definitions --------------------------------------

; module.exports = { foo() {}, bar: () => {} }
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_module
      property: (property_identifier) @_exports)
    right: (object
      (method_definition
        name: (property_identifier) @name) @definition.function))
  (#eq? @_module "module")
  (#eq? @_exports "exports"))

(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_module
      property: (property_identifier) @_exports)
    right: (object
      (pair
        key: (property_identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)]) @definition.function))
  (#eq? @_module "module")
  (#eq? @_exports "exports"))

; exports.foo = function () {}
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (identifier) @_exports
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_exports "exports")) @definition.function

; module.exports.foo = function () {}
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression
        object: (identifier) @_module
        property: (property_identifier) @_exports)
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_module "module")
  (#eq? @_exports "exports")) @definition.function

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

(program
  (lexical_declaration
    kind: "const"
    .
    (variable_declarator
      name: (identifier) @name
      value: [
        (array) (object) (string) (template_string) (number) (regex)
        (true) (false) (null) (undefined) (identifier)
        (call_expression) (new_expression) (member_expression) (subscript_expression)
        (binary_expression) (unary_expression) (ternary_expression)
        (parenthesized_expression) (await_expression)
        (as_expression) (satisfies_expression) (non_null_expression)
      ] @_value)
    .) @definition.constant
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

(program
  (lexical_declaration
    kind: "const"
    (variable_declarator
      name: (identifier) @name
      value: [
        (array) (object) (string) (template_string) (number) (regex)
        (true) (false) (null) (undefined) (identifier)
        (call_expression) (new_expression) (member_expression) (subscript_expression)
        (binary_expression) (unary_expression) (ternary_expression)
        (parenthesized_expression) (await_expression)
        (as_expression) (satisfies_expression) (non_null_expression)
      ] @_value) @definition.constant
    .
    (variable_declarator))
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

(program
  (lexical_declaration
    kind: "const"
    (variable_declarator)
    .
    (variable_declarator
      name: (identifier) @name
      value: [
        (array) (object) (string) (template_string) (number) (regex)
        (true) (false) (null) (undefined) (identifier)
        (call_expression) (new_expression) (member_expression) (subscript_expression)
        (binary_expression) (unary_expression) (ternary_expression)
        (parenthesized_expression) (await_expression)
        (as_expression) (satisfies_expression) (non_null_expression)
      ] @_value) @definition.constant)
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

(export_statement
  (lexical_declaration
    kind: "const"
    .
    (variable_declarator
      name: (identifier) @name
      value: [
        (array) (object) (string) (template_string) (number) (regex)
        (true) (false) (null) (undefined) (identifier)
        (call_expression) (new_expression) (member_expression) (subscript_expression)
        (binary_expression) (unary_expression) (ternary_expression)
        (parenthesized_expression) (await_expression)
        (as_expression) (satisfies_expression) (non_null_expression)
      ] @_value)
    .) @definition.constant
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

(export_statement
  (lexical_declaration
    kind: "const"
    (variable_declarator
      name: (identifier) @name
      value: [
        (array) (object) (string) (template_string) (number) (regex)
        (true) (false) (null) (undefined) (identifier)
        (call_expression) (new_expression) (member_expression) (subscript_expression)
        (binary_expression) (unary_expression) (ternary_expression)
        (parenthesized_expression) (await_expression)
        (as_expression) (satisfies_expression) (non_null_expression)
      ] @_value) @definition.constant
    .
    (variable_declarator))
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

(export_statement
  (lexical_declaration
    kind: "const"
    (variable_declarator)
    .
    (variable_declarator
      name: (identifier) @name
      value: [
        (array) (object) (string) (template_string) (number) (regex)
        (true) (false) (null) (undefined) (identifier)
        (call_expression) (new_expression) (member_expression) (subscript_expression)
        (binary_expression) (unary_expression) (ternary_expression)
        (parenthesized_expression) (await_expression)
        (as_expression) (satisfies_expression) (non_null_expression)
      ] @_value) @definition.constant)
  (#not-match? @_value "^(await\\s+)?(require|import)\\s*\\("))

; --- References: calls -----------------------------------------------------------

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

; @Decorator / @Decorator(...) (the call form is a call_expression above)
(decorator
  (identifier) @name) @reference.call

(decorator
  (member_expression
    property: (property_identifier) @name)) @reference.call

; --- References: types -----------------------------------------------------------
; Type names in annotations, generics, unions and heritage clauses.

(type_annotation
  (type_identifier) @name) @reference.type

(generic_type
  name: (type_identifier) @name) @reference.type

(nested_type_identifier
  name: (type_identifier) @name) @reference.type

(type_arguments
  (type_identifier) @name) @reference.type

(array_type
  (type_identifier) @name) @reference.type

(union_type
  (type_identifier) @name) @reference.type

(intersection_type
  (type_identifier) @name) @reference.type

(tuple_type
  (type_identifier) @name) @reference.type

(function_type
  return_type: (type_identifier) @name) @reference.type

(type_alias_declaration
  value: (type_identifier) @name) @reference.type

(as_expression
  (type_identifier) @name) @reference.type

(satisfies_expression
  (type_identifier) @name) @reference.type

; class Foo extends Bar implements Baz / interface Foo extends Bar
(extends_clause
  value: (identifier) @name) @reference.type

(extends_clause
  value: (member_expression
    property: (property_identifier) @name)) @reference.type

(implements_clause
  (type_identifier) @name) @reference.type

(extends_type_clause
  type: (type_identifier) @name) @reference.type
