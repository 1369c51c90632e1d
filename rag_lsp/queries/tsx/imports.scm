; inherits: typescript
; TSX imports are TypeScript's: every pattern is inherited.
