; inherits: typescript, _jsx
; TSX tags: every TypeScript pattern plus the JSX component references, both inherited.
