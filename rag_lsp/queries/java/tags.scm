; Java definitions and references for rag_lsp.
;
; Conventions (see rag_lsp/index/parsing/parse.py): @definition.<kind> on the
; declaration (annotations are part of it through its modifiers; a Javadoc
; comment above it is attached by the engine), @name on its name. Members get
; their qualified names by nesting: Ledger.post, Ledger.Entry.amount.
;
; Records are kind class and annotation types (@interface) kind interface, the
; nearest kinds rag_lsp has. Fields are indexed only when they are constants:
; `static final` fields of a class and every field of an interface.

; ---------------------------------------------------------------- types

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

; ---------------------------------------------------------------- members

(method_declaration
  name: (identifier) @name) @definition.method

; Elements of an annotation type: String value() default "";
(annotation_type_element_declaration
  name: (identifier) @name) @definition.method

; Constructors are named after their class: Ledger.Ledger.
(constructor_declaration
  name: (identifier) @name) @definition.constructor

; A record's compact constructor: record Range(int lo, int hi) { Range { ... } }
(compact_constructor_declaration
  name: (identifier) @name) @definition.constructor

; ---------------------------------------------------------------- constants
; The whole declaration is the definition (so its Javadoc attaches); in
; `static final int A = 1, B = 2;` both names are defined on it.

(field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant

(field_declaration
  (modifiers "final" "static")
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant

; Interface fields are implicitly static final.
(constant_declaration
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant

; ---------------------------------------------------------------- references

; foo(), this.foo(), repo.save(x), Objects.requireNonNull(x)
(method_invocation
  name: (identifier) @name) @reference.call

; new Foo(), new Foo<>(), new java.util.ArrayList<>()
(object_creation_expression
  type: [
    (type_identifier) @name
    (scoped_type_identifier (type_identifier) @name .)
    (generic_type [
      (type_identifier) @name
      (scoped_type_identifier (type_identifier) @name .)
    ])
  ]) @reference.call

; Method references: this::post, Entry::amount, String::valueOf
(method_reference
  (identifier) @name .) @reference.call

; extends / implements (classes, enums, records, interfaces)
(superclass
  [
    (type_identifier) @name
    (scoped_type_identifier (type_identifier) @name .)
    (generic_type [
      (type_identifier) @name
      (scoped_type_identifier (type_identifier) @name .)
    ])
  ] @reference.type)

(type_list
  [
    (type_identifier) @name
    (scoped_type_identifier (type_identifier) @name .)
    (generic_type [
      (type_identifier) @name
      (scoped_type_identifier (type_identifier) @name .)
    ])
  ] @reference.type)
