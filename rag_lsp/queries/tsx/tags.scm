; inherits: typescript
; TSX tags: every TypeScript pattern (inherited above) plus JSX component references.
; --- References: JSX ---------------------------------------------------------------
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
