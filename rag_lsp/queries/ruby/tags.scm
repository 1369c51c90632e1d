; Ruby tags.
; Definitions: @definition.<kind> on the definition node, @name on its name;
; @container on the scope of `class A::B`, `def Foo.bar` and `A::B = 1`.

; --- Classes and modules --------------------------------------------------------

(class
  name: (constant) @name) @definition.class

; class Billing::Invoice  ->  Billing.Invoice
(class
  name: (scope_resolution
    scope: (_) @container
    name: (constant) @name)) @definition.class

; class ::Invoice
(class
  name: (scope_resolution
    !scope
    name: (constant) @name)) @definition.class

(module
  name: (constant) @name) @definition.module

(module
  name: (scope_resolution
    scope: (_) @container
    name: (constant) @name)) @definition.module

(module
  name: (scope_resolution
    !scope
    name: (constant) @name)) @definition.module

; --- Methods ----------------------------------------------------------------------

; def foo / def foo= / def <=> : a function at the top level, a method (by
; nesting) inside a class, a module or `class << self`.
(method
  name: (_) @name) @definition.function

; def self.foo  ->  Container.foo
(singleton_method
  object: (self)
  name: (_) @name) @definition.method

; def Foo.bar  ->  Foo.bar
(singleton_method
  object: [(constant) (scope_resolution) (identifier)] @container
  name: (_) @name) @definition.method

; --- Constants --------------------------------------------------------------------

(assignment
  left: (constant) @name) @definition.constant

(assignment
  left: (scope_resolution
    scope: (_) @container
    name: (constant) @name)) @definition.constant

; --- References -------------------------------------------------------------------

; foo(1) / obj.foo / obj.foo(1) / obj.foo { ... }
; (a bare `foo` without receiver or arguments is indistinguishable from a local
; variable and is not captured)
(call
  method: (identifier) @name) @reference.call

; Foo.new / Mod::Foo.new construct Foo
(call
  receiver: (constant) @name
  method: (identifier) @_new
  (#eq? @_new "new")) @reference.call

(call
  receiver: (scope_resolution
    name: (constant) @name)
  method: (identifier) @_new
  (#eq? @_new "new")) @reference.call

; class Foo < Base / < Mod::Base
(superclass
  (constant) @name) @reference.type

(superclass
  (scope_resolution
    name: (constant) @name)) @reference.type

; include Comparable / extend Mod::Helpers / prepend Logging
(call
  !receiver
  method: (identifier) @_mixin
  arguments: (argument_list
    (constant) @name)
  (#any-of? @_mixin "include" "extend" "prepend")) @reference.type

(call
  !receiver
  method: (identifier) @_mixin
  arguments: (argument_list
    (scope_resolution
      name: (constant) @name))
  (#any-of? @_mixin "include" "extend" "prepend")) @reference.type
