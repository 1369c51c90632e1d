; Ruby imports: require, require_relative and load with a literal path.
; @import on the call, @import.module on the path (a string without
; interpolation). Ruby has no imported names: a file defines what it defines.

(call
  !receiver
  method: (identifier) @_require
  arguments: (argument_list
    .
    (string
      .
      (string_content) @import.module
      .))
  (#any-of? @_require "require" "require_relative" "load")) @import

; autoload :Invoice, "billing/invoice"
(call
  !receiver
  method: (identifier) @_autoload
  arguments: (argument_list
    (_)
    .
    (string
      .
      (string_content) @import.module
      .))
  (#eq? @_autoload "autoload")) @import
