-- Without setup(): vim.lsp.enable('rag_lsp') uses the plugin's lsp/rag_lsp.lua defaults (here with
-- only `cmd` changed), attaches, and still shows code lenses.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  vim.opt.rtp:prepend(T.plugin)
  vim.cmd('filetype on')
  vim.cmd('runtime plugin/rag_lsp.lua')
  vim.cmd.cd(vim.fn.fnameescape(T.workspace))
  vim.lsp.config('rag_lsp', { cmd = { T.server, 'serve', '--log-file', T.server_log } })
  vim.lsp.enable('rag_lsp')
  local buf = T.open('web/client.ts')
  local client = T.attached(buf)
  T.set('root_dir', client.root_dir)
  T.wait('resolved lenses above `class CartClient` and `checkout`', function()
    local lenses = T.lenses(buf)
    T.set('lenses', lenses)
    return #lenses == 2
  end)
  T.set('commands', vim.fn.exists(':RagContext') == 2 and vim.fn.exists(':RagStatus') == 2)
end)
