; inherits: _ecmascript, _jsx
; JavaScript (and JSX) tags: the patterns shared with TypeScript and the JSX
; references are inherited above; these are the ones whose node types or
; fields differ in TypeScript's grammar.

; class Foo {}: the name is an identifier (a type_identifier in TypeScript).
(class_declaration
  name: (identifier) @name) @definition.class

; handleClick = () => {} as a class field
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.method

; class Foo extends Bar / extends ns.Bar
(class_heritage
  (identifier) @name) @reference.type

(class_heritage
  (member_expression
    property: (property_identifier) @name)) @reference.type
