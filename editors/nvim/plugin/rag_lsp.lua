-- rag_lsp: user commands. The client itself is configured by require('rag_lsp').setup{...}
-- (or vim.lsp.enable('rag_lsp') with the defaults in lsp/rag_lsp.lua).
if vim.g.loaded_rag_lsp then
  return
end
vim.g.loaded_rag_lsp = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify_once('rag_lsp needs Neovim 0.11 or newer', vim.log.levels.WARN)
  return
end

local command = vim.api.nvim_create_user_command

command('RagContext', function(args)
  require('rag_lsp').ask(args.args, { scratch = args.bang or nil })
end, {
  nargs = '*',
  bang = true,
  desc = 'rag_lsp: ranked context for a question into the quickfix list (! also opens the readable block)',
})

command('RagPrompt', function(args)
  require('rag_lsp').prompt(args.args)
end, {
  nargs = '*',
  desc = 'rag_lsp: the answer to a question as a prompt block, in the unnamed register (and + with a clipboard)',
})

command('RagSymbol', function(args)
  require('rag_lsp').symbol({ scratch = args.bang or nil })
end, { bang = true, desc = 'rag_lsp: context for the symbol under the cursor' })

command('RagStatus', function(args)
  require('rag_lsp').status({ style = args.bang and 'echo' or nil })
end, { bang = true, desc = 'rag_lsp: index status (! echoes it instead of a float)' })
