; JSX component references, shared by javascript/tags.scm and tsx/tags.scm
; (`; inherits: _jsx`); plain TypeScript has no JSX nodes.
; <Foo />, <Foo>...</Foo>, <ns.Foo /> render components (lower-case tags are HTML).

(jsx_opening_element
  name: (identifier) @name
  (#match? @name "^[A-Z]")) @reference.call

(jsx_self_closing_element
  name: (identifier) @name
  (#match? @name "^[A-Z]")) @reference.call

(jsx_opening_element
  name: (member_expression
    property: (property_identifier) @name)) @reference.call

(jsx_self_closing_element
  name: (member_expression
    property: (property_identifier) @name)) @reference.call
