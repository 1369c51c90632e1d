-- The default vim.lsp config of rag_lsp, so that vim.lsp.enable('rag_lsp') works without setup().
-- require('rag_lsp').setup{...} replaces it with your options.
return require('rag_lsp.config').lsp_config()
