; inherits: _ecmascript
; TypeScript tags (tsx/tags.scm inherits them and adds JSX). The patterns
; shared with JavaScript are inherited above; these are TypeScript's own or
; use node types that differ from JavaScript's grammar.

; --- Functions -------------------------------------------------------------

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

; --- Classes, interfaces, types, enums, namespaces ----------------------------

; class Foo {}: the name is a type_identifier (an identifier in JavaScript).
(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

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

; --- References: types -----------------------------------------------------------
; Type names in annotations, generics, unions and heritage clauses.

; A type name anywhere directly inside one of these nodes is a use of it.
((type_identifier) @name @reference.type
  (#has-parent? @name
    "type_annotation" "type_arguments" "array_type" "union_type" "intersection_type" "tuple_type"
    "as_expression" "satisfies_expression"))

; Type names in one field only: Foo<T>, ns.Foo, () => Foo, type A = Foo.
(generic_type
  name: (type_identifier) @name) @reference.type

(nested_type_identifier
  name: (type_identifier) @name) @reference.type

(function_type
  return_type: (type_identifier) @name) @reference.type

(type_alias_declaration
  value: (type_identifier) @name) @reference.type

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
