; Definitions: @definition.<kind> on the whole node, @name on its name.
(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; Module-level constants (UPPER_CASE or annotated), indexed as symbols but not chunked.
(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.constant))

; References: calls by plain name and by attribute, and bare attribute/type uses.
(call
  function: (identifier) @name) @reference.call

(call
  function: (attribute
    attribute: (identifier) @name)) @reference.call

; Base classes, plain or qualified (`class Door(Base)`, `class Door(mod.Base)`), as kind "base": a server's
; references that land on one of these name a subclass (implementations for servers that lack them).
(class_definition
  superclasses: (argument_list
    (identifier) @name) @reference.base)

(class_definition
  superclasses: (argument_list
    (attribute
      attribute: (identifier) @name)) @reference.base)
