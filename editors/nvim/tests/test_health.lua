-- :checkhealth rag_lsp with a running client: the server binary and its version, the attached client,
-- the index status from ragLsp/status, the settings, and the language servers section.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  T.bootstrap({ settings = { budgetTokens = 1500 } })
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  vim.cmd('checkhealth rag_lsp')
  local health = vim.api.nvim_get_current_buf()
  T.expect(health ~= buf, 'checkhealth opened no buffer')
  T.set('lines', vim.api.nvim_buf_get_lines(health, 0, -1, false))
end)
