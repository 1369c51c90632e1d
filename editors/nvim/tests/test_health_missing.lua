-- :checkhealth rag_lsp when the configured server command does not exist: an error that says how to
-- install it, and no client.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  T.bootstrap({ cmd = { vim.fs.joinpath(vim.fn.tempname(), 'no-such-rag-lsp'), 'serve' } })
  vim.cmd('checkhealth rag_lsp')
  T.set('lines', vim.api.nvim_buf_get_lines(0, 0, -1, false))
end)
