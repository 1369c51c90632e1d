; Rust definitions and references for rag_lsp.
;
; Conventions (see rag_lsp/index/parsing/parse.py): @definition.<kind> on the item,
; @name on its name. Attributes (`#[derive]`) and doc comments above an item
; are attached by the engine (languages.toml lists them as comment types).
;
; An `impl` block is a definition of kind impl named after the implementing
; type (`impl Foo`, `impl<T> Display for Foo<T>` and `impl fmt::Debug for
; a::Foo` are all named `Foo`), so the functions inside become methods
; `Foo.method`. The implemented trait is a type reference.

; ---------------------------------------------------------------- functions

; Free functions; inside an impl or trait the engine makes them methods.
(function_item
  name: (identifier) @name) @definition.function

; Bodiless signatures: trait methods (-> Trait.method) and `extern` blocks.
(function_signature_item
  name: (identifier) @name) @definition.function

; ---------------------------------------------------------------- types

(struct_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(union_item
  name: (type_identifier) @name) @definition.union

(trait_item
  name: (type_identifier) @name) @definition.trait

(impl_item
  type: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: [
      (type_identifier) @name
      (scoped_type_identifier name: (type_identifier) @name)
    ])
    (reference_type type: [
      (type_identifier) @name
      (generic_type type: (type_identifier) @name)
    ])
  ]) @definition.impl

; `type Alias = ...;` (also associated types given a value inside an impl).
(type_item
  name: (type_identifier) @name) @definition.type

; ---------------------------------------------------------------- modules, macros, constants

; An inline module; `mod foo;` (no body) is an import, see imports.scm.
(mod_item
  name: (identifier) @name
  body: (declaration_list)) @definition.module

(macro_definition
  name: (identifier) @name) @definition.macro

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

; ---------------------------------------------------------------- references

; foo(), Foo::new(), module::run(), x.bar()
(call_expression
  function: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
    (field_expression field: (field_identifier) @name)
  ]) @reference.call

; Turbofish: parse::<u8>(), Vec::<u8>::new(), it.collect::<Vec<_>>()
(call_expression
  function: (generic_function
    function: [
      (identifier) @name
      (scoped_identifier name: (identifier) @name)
      (field_expression field: (field_identifier) @name)
    ])) @reference.call

; Macro invocations by name: println!(..), log::info!(..)
(macro_invocation
  macro: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
  ]) @reference.call

; Struct literals: Foo { .. }, config::Settings { .. }
(struct_expression
  name: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
  ]) @reference.type

; The trait of `impl Trait for Type`.
(impl_item
  trait: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: [
      (type_identifier) @name
      (scoped_type_identifier name: (type_identifier) @name)
    ])
  ]) @reference.type

; Supertraits and bounds: trait Tr: Base + fmt::Debug, fn f<T: Store>()
(trait_bounds
  [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
  ] @reference.type)
